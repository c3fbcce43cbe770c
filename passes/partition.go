package passes

import (
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// newKernel starts a kernel holding node n.
func (s *State) newKernel(st plan.Strategy, n *ir.Node) *plan.Kernel {
	if s.Plan == nil {
		s.Plan = &plan.Plan{Graph: s.Graph}
	}
	k := &plan.Kernel{Strategy: st}
	s.Plan.Kernels = append(s.Plan.Kernels, k)
	s.add(k, n)
	return k
}

func (s *State) add(k *plan.Kernel, n *ir.Node) {
	k.Nodes = append(k.Nodes, n)
	s.kernelOf[n] = k
}

// producedBy reports whether kernel k computes v, directly or through views.
func (s *State) producedBy(v *ir.Value, k *plan.Kernel) bool {
	for {
		d := v.Def
		if s.kernelOf[d] == k {
			return true
		}
		if d.Op.IsLeaf() || !plan.IsView(d.Op) || len(d.Args) == 0 || d.Op == ir.OpConst || d.Op == ir.OpSeqLens {
			return false
		}
		v = d.Args[0]
	}
}

// dependsOn reports whether computing v needs any value kernel k computes.
func (s *State) dependsOn(v *ir.Value, k *plan.Kernel, memo map[*ir.Value]bool) bool {
	if r, ok := memo[v]; ok {
		return r
	}
	memo[v] = false
	d := v.Def
	r := s.kernelOf[d] == k
	for _, a := range d.Args {
		r = r || s.dependsOn(a, k, memo)
	}
	memo[v] = r
	return r
}

// joinable checks that node n may join kernel k: it reads at least one value
// of k, and its other operands do not depend on k (they must be ready
// before k starts). It returns the operand that blocks the fusion, if any.
func (s *State) joinable(n *ir.Node, k *plan.Kernel) (reads bool, blocker *ir.Value) {
	memo := map[*ir.Value]bool{}
	for _, a := range n.Args {
		if s.producedBy(a, k) {
			reads = true
			continue
		}
		if s.dependsOn(a, k, memo) {
			return reads, a
		}
	}
	return reads, nil
}

// assignable reports whether a node still needs a kernel.
func (s *State) assignable(n *ir.Node) bool {
	return s.kernelOf[n] == nil && !plan.IsView(n.Op)
}
