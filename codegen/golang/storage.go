package golang

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// storageShape is the shape of the buffer a leaf or output needs at bound
// dims. A state is sized for what the step leaves in it: a contiguous or
// ragged cache holds its T cached tokens plus the S an append writes
// ([2, B, G, T+S, Dh]); a paged cache is its pool of pages
// ([Pages, 2, G, page, Dh]), into which the append writes.
func storageShape(g *ir.Graph, v *ir.Value, dims map[string]int64) ([]int64, error) {
	sh, err := evalShape(v, dims)
	if err != nil || v.Def == nil || v.Def.Op != ir.OpState {
		return sh, err
	}
	if l := v.Def.Attr.Layout; l != nil && l.Kind == ir.Paged {
		pages, err := l.Pages.Eval(dims)
		if err != nil {
			return nil, err
		}
		return []int64{pages, 2, sh[2], l.Page, sh[4]}, nil // sh is [2, B, G, T, Dh]
	}
	if nd := g.AppendOf(v); nd != nil {
		k, err := evalShape(nd.Outs[0], dims) // [B, G, T+S, Dh]
		if err != nil {
			return nil, err
		}
		if len(nd.Outs) == 2 && len(k) == 4 && len(sh) == 5 {
			return []int64{2, k[0], k[1], k[2], k[3]}, nil
		}
	}
	return sh, nil
}

// storageBytes is the size of storageShape.
func storageBytes(g *ir.Graph, v *ir.Value, dims map[string]int64) (int64, error) {
	sh, err := storageShape(g, v, dims)
	if err != nil {
		return 0, err
	}
	n := v.Type.DType.Size()
	for _, d := range sh {
		n *= d
	}
	return n, nil
}

func evalShape(v *ir.Value, dims map[string]int64) ([]int64, error) {
	sh, err := v.Type.Shape.Eval(dims)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Ref(), err)
	}
	out := make([]int64, len(sh))
	for i, d := range sh {
		out[i] = int64(d)
	}
	return out, nil
}
