package golang

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// storageShape is the shape of the buffer a leaf or output needs at bound
// dims (ir.Graph.StorageShape).
func storageShape(g *ir.Graph, v *ir.Value, dims map[string]int64) ([]int64, error) {
	sh, err := g.StorageShape(v).Eval(dims)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Ref(), err)
	}
	out := make([]int64, len(sh))
	for i, d := range sh {
		out[i] = int64(d)
	}
	return out, nil
}

// storageBytes is the size of storageShape.
func storageBytes(g *ir.Graph, v *ir.Value, dims map[string]int64) (int64, error) {
	n, err := g.StorageShape(v).NumElements().Eval(dims)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", v.Ref(), err)
	}
	return n * v.Type.DType.Size(), nil
}
