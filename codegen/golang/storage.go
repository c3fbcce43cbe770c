package golang

import (
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// storageBytes is the size of the buffer a leaf or output needs at bound
// dims. A state is sized for what the step leaves in it: a contiguous or
// ragged cache holds its T cached tokens plus the S an append writes
// ([2, B, G, T+S, Dh]); a paged cache is its pool of pages
// ([Pages, 2, G, page, Dh]), into which the append writes.
func storageBytes(g *ir.Graph, v *ir.Value, dims map[string]int64) (int64, error) {
	n, err := plan.Bytes(v, dims)
	if err != nil || v.Def == nil || v.Def.Op != ir.OpState {
		return n, err
	}
	if l := v.Def.Attr.Layout; l != nil && l.Kind == ir.Paged {
		pages, err := l.Pages.Eval(dims)
		if err != nil {
			return 0, err
		}
		sh, err := v.Type.Shape.Eval(dims) // [2, B, G, T, Dh]
		if err != nil {
			return 0, err
		}
		return pages * 2 * int64(sh[2]) * l.Page * int64(sh[4]) * v.Type.DType.Size(), nil
	}
	for _, nd := range g.Nodes {
		if nd.Op != ir.OpAppend || nd.Args[0] != v {
			continue
		}
		var appended int64
		for _, o := range nd.Outs {
			b, err := plan.Bytes(o, dims)
			if err != nil {
				return 0, err
			}
			appended += b
		}
		n = max(n, appended)
	}
	return n, nil
}
