package plan

import "github.com/fuser-dev/fuser/ir"

// Bytes is the size of a value at bound dims.
func Bytes(v *ir.Value, dims map[string]int64) (int64, error) {
	n, err := v.Type.Shape.NumElements().Eval(dims)
	if err != nil {
		return 0, err
	}
	return n * v.Type.DType.Size(), nil
}

// InCache reports whether a value lives in a KV cache (the whole cache an
// append returns), not in a buffer of its own.
func InCache(v *ir.Value) bool {
	return v.Def != nil && v.Def.Op == ir.OpAppend
}
