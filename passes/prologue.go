package passes

import (
	"fmt"
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
// launch and a kernel boundary fewer. It fires where the matmul reads the
// row kernel's output directly (no view) and alone, nothing is ragged,
// and the GEMV has at most plan.GemvCUDACoreRows rows at the bound dims:
// the CUDA-core tile, whose blocks each take every row of K. The row
// kernel's other outputs (a residual sum the norm read, which later
// kernels read too) the GEMV's lead block writes (sideOutputs). More rows
// take the tensor-core GEMV, whose ring copies its operand from memory,
// and keep the row kernel.
//
// It runs only with Options.Prologue: measured, every block computing the
// row's statistics before its first weight load cost more than the norm
// kernel and its handoff.
func prologue(s *State) (int, error) {
	if !s.Prologue {
		return 0, nil
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
		m, _ := gemmRows(mm, s.dim)
		why := ""
		switch side := sideOutputs(r, k, a); {
		case plan.Root(a) != a:
			why = "the matmul reads its left operand through a view"
		case s.noPrologue[mm.Outs[0].Ref()] != "":
			why = s.noPrologue[mm.Outs[0].Ref()]
		case len(users[a]) != 1:
			why = "another op reads the norm too"
		case side != "":
			why = side
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

// sideOutputs says why row kernel r, whose output a GEMV kernel k reads
// as its left operand a, may not write its other outputs from k's lead
// block, or "": they must be whole rows (a value a row, a statistic, is
// not stored by the prologue), and k must not read them (its blocks would
// read what the lead block writes in the same launch).
func sideOutputs(r, k *plan.Kernel, a *ir.Value) string {
	for _, o := range r.Outputs {
		if o == a {
			continue
		}
		if sh := o.Type.Shape; !sh[len(sh)-1].Equal(a.Type.Shape[len(a.Type.Shape)-1]) {
			return fmt.Sprintf("the row kernel also writes %s, a value a row", o.Ref())
		}
		for _, n := range k.Nodes {
			for _, arg := range n.Args {
				if slices.Contains(plan.Sources(arg), o) {
					return fmt.Sprintf("the GEMV's epilogue reads the row kernel's %s", o.Ref())
				}
			}
		}
	}
	return ""
}

// raggedNodes reports whether any of nodes reads or writes a ragged value.
func raggedNodes(nodes []*ir.Node) bool {
	for _, n := range nodes {
		for _, v := range slices.Concat(n.Args, n.Outs) {
			if v.Ragged != nil {
				return true
			}
		}
	}
	return false
}
