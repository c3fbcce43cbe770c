package torch

import (
	"github.com/fuser-dev/fuser/diag"
	"github.com/fuser-dev/fuser/ir"
)

// fp8Ops are the ops a program may apply to fp8e4m3 values: PyTorch's
// float8 tensors convert to and from other dtypes and change views, but
// have no arithmetic, reductions, matmuls (other than the scaled matmul of
// a fixed layout) or copies between tensors.
var fp8Ops = map[ir.Op]bool{ir.OpCast: true, ir.OpReshape: true, ir.OpTranspose: true, ir.OpSplit: true, ir.OpSlice: true}

// check lists, positioned, what the exported program could not compute as
// a PyTorch program would: an op no spec writes (the attention node the
// passes build) and fp8e4m3 values other ops than fp8Ops read or write, or
// that live in a paged or ragged cache.
func check(g *ir.Graph) diag.List {
	var errs diag.List
	for _, n := range g.Nodes {
		if !emitted[n.Op] && !n.Op.IsLeaf() {
			errs.Add(n.Pos, "export the graph as the spec writes it, before the passes", "%s is not an op of the spec language: the exported program has no form for it", n.Op)
			continue
		}
		if n.Op.IsLeaf() || n.Op == ir.OpConst {
			// A number takes its tensor's dtype: the op using it is reported.
			if l := n.Attr.Layout; l != nil && l.Kind != ir.Contiguous && n.Outs[0].Type.DType == ir.FP8E4M3 {
				errs.Add(n.Pos, "hold the cache in bf16 (or f16)", "a %s fp8e4m3 cache: PyTorch cannot gather or scatter fp8e4m3 tokens", l.Kind)
			}
			continue
		}
		if !fp8Ops[n.Op] && touchesFP8(n) {
			errs.Add(n.Pos, "cast(x, bf16) (or f32) first, as PyTorch programs do, and cast the result back", "PyTorch has no fp8e4m3 %s: its float8 tensors only convert to other dtypes and change views", n.Op)
		}
	}
	errs.Sort()
	return errs
}

// touchesFP8 reports whether n reads or writes an fp8e4m3 value.
func touchesFP8(n *ir.Node) bool {
	for _, vs := range [][]*ir.Value{n.Args, n.Outs} {
		for _, v := range vs {
			if v.Type.DType == ir.FP8E4M3 {
				return true
			}
		}
	}
	return false
}
