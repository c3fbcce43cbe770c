package passes

import (
	"fmt"
	"sort"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// kernels gives every op no earlier pass placed a kernel of its own, orders
// the kernels so each runs after the kernels it reads from, and computes
// their inputs, outputs and names. On its own it builds the unfused plan.
func kernels(s *State) (int, error) {
	changes := 0
	for _, n := range s.Graph.Nodes {
		if !s.assignable(n) {
			continue
		}
		s.newKernel(strategyOf(n), n)
		changes++
	}
	if s.Plan == nil {
		s.Plan = &plan.Plan{Graph: s.Graph}
	}
	if err := s.order(); err != nil {
		return changes, err
	}
	s.Plan.Finish()
	return changes, nil
}

// strategyOf is the strategy of a kernel computing only n.
func strategyOf(n *ir.Node) plan.Strategy {
	kind := n.Op.Kind()
	switch {
	case n.Op.Info().Pattern == ir.OutEWiseFusable:
		return plan.Gemm
	case kind == ir.KindAttention:
		return plan.Attention
	case kind == ir.KindAppend:
		return plan.Append
	case kind == ir.KindGather || kind == ir.KindRope:
		return plan.Copy
	case isReduction(n) && !rowOp(n):
		return plan.Reduce
	}
	return plan.Row
}

// order sorts the kernels topologically, the load stage first, ties broken
// by their first node.
func (s *State) order() error {
	ks := s.Plan.Kernels
	pos := map[*ir.Node]int{}
	for i, n := range s.Graph.Nodes {
		pos[n] = i
	}
	for _, k := range ks {
		sort.Slice(k.Nodes, func(i, j int) bool { return pos[k.Nodes[i]] < pos[k.Nodes[j]] })
	}
	deps := map[*plan.Kernel]map[*plan.Kernel]bool{}
	for _, k := range ks {
		deps[k] = map[*plan.Kernel]bool{}
		for _, n := range k.Nodes {
			for _, a := range n.Args {
				for _, src := range s.kernelsBehind(a) {
					if src != k {
						deps[k][src] = true
					}
				}
			}
		}
	}
	sort.SliceStable(ks, func(i, j int) bool {
		if ks[i].Load != ks[j].Load {
			return ks[i].Load
		}
		return pos[ks[i].Nodes[0]] < pos[ks[j].Nodes[0]]
	})
	var out []*plan.Kernel
	done := map[*plan.Kernel]bool{}
	for len(out) < len(ks) {
		progress := false
		for _, k := range ks {
			if done[k] || !allDone(deps[k], done) {
				continue
			}
			out, done[k], progress = append(out, k), true, true
			break
		}
		if !progress {
			return fmt.Errorf("kernels depend on each other in a cycle")
		}
	}
	s.Plan.Kernels = out
	return nil
}

// kernelsBehind returns the kernels that compute v, looking through views.
func (s *State) kernelsBehind(v *ir.Value) []*plan.Kernel {
	d := v.Def
	if k := s.kernelOf[d]; k != nil {
		return []*plan.Kernel{k}
	}
	var out []*plan.Kernel
	for _, a := range d.Args {
		out = append(out, s.kernelsBehind(a)...)
	}
	return out
}

func allDone(deps map[*plan.Kernel]bool, done map[*plan.Kernel]bool) bool {
	for d := range deps {
		if !done[d] {
			return false
		}
	}
	return true
}
