package passes

import (
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// rows groups element-wise chains and trees over the same rows (all axes but
// the last) into one kernel with at most one reduction along the row:
// RMSNorm, residual add + RMSNorm (writing both the sum and the normalised
// value), softmax with its pre- and post-processing. Every value read outside
// the kernel becomes one of its outputs.
func rows(s *State) (int, error) {
	changes := 0
	for i, n := range s.Graph.Nodes {
		if !s.assignable(n) || !rowOp(n) {
			continue
		}
		k := s.newKernel(plan.Row, n)
		domain := rowDomain(n)
		reductions := 0
		if isReduction(n) {
			reductions = 1
		}
		for _, c := range s.Graph.Nodes[i+1:] {
			if !s.assignable(c) {
				continue
			}
			reads, blocker := s.joinable(c, k)
			if !reads {
				continue
			}
			switch {
			case s.keptApart(c) != "":
				s.explain(false, "row kernel of %s → %s %s: %s", n.Outs[0].Ref(), c.Op, c.Outs[0].Ref(), s.keptApart(c))
			case !rowOp(c):
				s.explain(false, "row kernel of %s → %s %s: a %s op", n.Outs[0].Ref(), c.Op, c.Outs[0].Ref(), c.Op.Info().Pattern)
			case !rowDomain(c).Equal(domain):
				s.explain(false, "row kernel of %s → %s %s: rows %s differ from %s", n.Outs[0].Ref(), c.Op, c.Outs[0].Ref(), rowDomain(c), domain)
			case isReduction(c) && reductions > 0:
				s.explain(false, "row kernel of %s → %s %s: a second row reduction needs another pass over the row", n.Outs[0].Ref(), c.Op, c.Outs[0].Ref())
			case blocker != nil:
				s.explain(false, "row kernel of %s → %s %s: its operand %s is computed from this kernel by another kernel", n.Outs[0].Ref(), c.Op, c.Outs[0].Ref(), blocker.Ref())
			default:
				s.add(k, c)
				if isReduction(c) {
					reductions++
				}
				s.explain(true, "row kernel of %s ← %s %s", n.Outs[0].Ref(), c.Op, c.Outs[0].Ref())
				changes++
			}
		}
	}
	return changes, nil
}

// rowOp reports whether n can be part of a row kernel: element-wise, or a
// reduction along the last axis.
func rowOp(n *ir.Node) bool {
	switch n.Op.Info().Pattern {
	case ir.ElemWise, ir.Broadcast:
		return n.Op.Kind() != ir.KindConst
	case ir.Reduction:
		return n.Attr.Axis == len(n.Args[0].Type.Shape)-1
	}
	return false
}

func isReduction(n *ir.Node) bool { return n.Op.Info().Pattern == ir.Reduction }

// rowDomain is the shape of the rows n works on: its output shape without
// the last axis.
func rowDomain(n *ir.Node) ir.Shape {
	s := n.Outs[0].Type.Shape
	if len(s) == 0 {
		return s
	}
	return s[:len(s)-1]
}
