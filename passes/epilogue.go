package passes

import (
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// epilogue makes a kernel of every matmul and lets it absorb the ops that
// consume its result element by element (through splits and reshapes):
// bias and residual adds, activations, SwiGLU's silu(g)·u across the two
// halves of a gate/up product, RoPE on the q/k columns, the KV-cache append of
// the new k and v, casts. A consumer whose other operand depends on the
// matmul through another kernel cannot join: it would have to wait for it.
func epilogue(s *State) (int, error) {
	changes := 0
	for i, m := range s.Graph.Nodes {
		if m.Op.Info().Pattern != ir.OutEWiseFusable || s.kernelOf[m] != nil {
			continue
		}
		k := s.newKernel(plan.Gemm, m)
		for _, c := range s.Graph.Nodes[i+1:] {
			if !s.assignable(c) {
				continue
			}
			reads, blocker := s.joinable(c, k)
			if !reads {
				continue
			}
			if why := s.keptApart(c); why != "" {
				s.explain(false, "matmul %s → %s %s: %s", m.Outs[0].Ref(), c.Op, c.Outs[0].Ref(), why)
				continue
			}
			if why := epilogueOp(s, c, k); why != "" {
				s.explain(false, "matmul %s → %s %s: %s", m.Outs[0].Ref(), c.Op, c.Outs[0].Ref(), why)
				continue
			}
			if !materialised(s, c) {
				s.explain(false, "matmul %s → %s %s: its result only feeds reductions, which compute it from the row they read", m.Outs[0].Ref(), c.Op, c.Outs[0].Ref())
				continue
			}
			if blocker != nil {
				s.explain(false, "matmul %s → %s %s: its operand %s is computed from the matmul by another kernel", m.Outs[0].Ref(), c.Op, c.Outs[0].Ref(), blocker.Ref())
				continue
			}
			s.add(k, c)
			s.explain(true, "matmul %s ← %s %s (epilogue)", m.Outs[0].Ref(), c.Op, c.Outs[0].Ref())
			changes++
		}
	}
	return changes, nil
}

// epilogueOp says why c cannot run in the store phase of matmul kernel k, or
// "" when it can: it must map each output element from elements of k's tile
// (no reduction, no broadcast of k's values to a larger shape).
func epilogueOp(s *State, c *ir.Node, k *plan.Kernel) string {
	kind := c.Op.Kind()
	switch c.Op.Info().Pattern {
	case ir.ElemWise, ir.Broadcast:
	default:
		if kind != ir.KindRope && kind != ir.KindAppend {
			return c.Op.Info().Pattern.String() + " ops cannot run in a matmul epilogue"
		}
	}
	if kind == ir.KindMask {
		return "masks belong to attention"
	}
	out := c.Outs[0].Type.Shape
	if kind == ir.KindAppend {
		return ""
	}
	derived := 0
	for _, a := range c.Args {
		if s.producedBy(a, k) {
			derived++
			if !a.Type.Shape.NumElements().Equal(out.NumElements()) {
				return "it broadcasts the matmul result to a larger shape"
			}
		}
	}
	mo := k.Nodes[0].Outs[0].Type.Shape
	if _, ok := mo[len(mo)-1].Value(); !ok && (derived > 1 || kind == ir.KindRope) {
		return "it combines columns of a matmul whose N is not a constant, which the generated epilogue cannot pair"
	}
	return ""
}

// materialised reports whether computing c in an epilogue pays: c is a graph
// output or cache write, or some reader of c (through views) is not a
// reduction. A value read only by reductions is better computed by the row
// kernel from the input it reads anyway than written by the epilogue.
func materialised(s *State, c *ir.Node) bool {
	if c.Op.Kind() == ir.KindAppend {
		return true
	}
	users := s.Graph.Users()
	isOutput := map[*ir.Value]bool{}
	for _, o := range s.Graph.Outputs {
		isOutput[o] = true
	}
	var readers func(v *ir.Value) bool
	readers = func(v *ir.Value) bool {
		if isOutput[v] {
			return true
		}
		for _, u := range users[v] {
			if plan.IsView(u.Op) {
				for _, o := range u.Outs {
					if readers(o) {
						return true
					}
				}
				continue
			}
			if u.Op.Info().Pattern != ir.Reduction {
				return true
			}
		}
		return false
	}
	return readers(c.Outs[0])
}
