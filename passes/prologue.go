package passes

import (
	"slices"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// prologue moves a row kernel into the one-row GEMV that alone reads its
// output: RMSNorm or LayerNorm before a decode step's projection. The GEMV
// stages its left operand's whole row in shared memory anyway; it now
// computes that row itself from the row kernel's inputs (the residual
// stream and the norm's weight, read from L2 by each of its blocks), so
// the normalised row is neither written nor read back, and the step has a
// launch and a kernel boundary fewer. It fires where the matmul's left
// operand is the row kernel's only output, read by the matmul alone and
// directly (no view), nothing ragged, and the GEMV has at most
// plan.GemvCUDACoreRows rows at the bound dims: the CUDA-core tile, whose
// blocks each take every row of K. More rows take the tensor-core GEMV,
// whose ring copies its operand from memory, and keep the row kernel.
func prologue(s *State) (int, error) {
	eval := func(d ir.Dim) int64 {
		v, _ := d.Eval(s.Dims)
		return v
	}
	users := s.Graph.Users()
	changes := 0
	for _, k := range slices.Clone(s.Plan.Kernels) {
		if k.Strategy != plan.Gemm || k.Load || len(k.Prologue()) > 0 {
			continue
		}
		mm := k.Anchor()
		a := mm.Args[0]
		r := s.kernelOf[plan.Root(a).Def]
		if r == nil || r.Strategy != plan.Row || r.Load {
			continue
		}
		why := ""
		m, _ := gemmRows(mm, eval)
		switch {
		case plan.Root(a) != a:
			why = "the matmul reads its left operand through a view"
		case s.noPrologue[mm.Outs[0].Ref()] != "":
			why = s.noPrologue[mm.Outs[0].Ref()]
		case len(r.Outputs) != 1 || r.Outputs[0] != a || len(users[a]) != 1:
			why = "the row kernel's values are read elsewhere too"
		case m > plan.GemvCUDACoreRows:
			why = "its rows take the tensor-core GEMV, whose ring copies the operand from memory"
		case raggedNodes(r.Nodes):
			why = "the row kernel reads ragged rows"
		}
		if why != "" {
			s.explain(false, "%s: row kernel %s as its prologue: %s", k.Name, r.Name, why)
			continue
		}
		s.explain(true, "%s: row kernel %s as its prologue, the GEMV computing its left operand", k.Name, r.Name)
		for _, n := range r.Nodes {
			s.add(k, n)
		}
		s.Plan.Kernels = slices.DeleteFunc(s.Plan.Kernels, func(x *plan.Kernel) bool { return x == r })
		changes++
	}
	if changes > 0 {
		if err := s.order(); err != nil {
			return changes, err
		}
		s.Plan.Finish()
	}
	return changes, nil
}

// raggedNodes reports whether any of nodes reads or writes a ragged value.
func raggedNodes(nodes []*ir.Node) bool {
	for _, n := range nodes {
		for _, v := range append(slices.Clone(n.Args), n.Outs...) {
			if v.Ragged != nil {
				return true
			}
		}
	}
	return false
}
