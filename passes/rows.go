package passes

import (
	"slices"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// rows groups element-wise chains and trees over the same rows (all axes but
// the last) into one kernel with reductions along the row: RMSNorm, residual
// add + RMSNorm (writing both the sum and the normalised value), softmax with
// its pre- and post-processing. Reductions chain (each one a pass over the
// row) while those before are per-row statistics (one value a row: sum,
// mean, max): LayerNorm's mean and then the mean of squared deviations, a
// norm after a residual add that a norm produced. An op that joins also
// brings the element-wise ops over the same rows that compute its other
// operands from leaves and that nothing else reads (tanh(x) * sigmoid(z):
// the sigmoid joins the tanh's kernel with the product). Every value read
// outside the kernel becomes one of its outputs.
func rows(s *State) (int, error) {
	changes := 0
	users := s.Graph.Users()
	for i, n := range s.Graph.Nodes {
		if !s.assignable(n) || !rowOp(n) {
			continue
		}
		k := s.newKernel(plan.Row, n)
		domain := rowDomain(n)
		// stats: the kernel's reductions so far are per-row statistics
		// (none is true as well), so another reduction may follow them.
		stats := !isReduction(n) || plan.RowStatistic(n)
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
			case isReduction(c) && !stats:
				s.explain(false, "row kernel of %s → %s %s: a reduction after one that keeps the whole row (%s)", n.Outs[0].Ref(), c.Op, c.Outs[0].Ref(), lastReduction(k).Op)
			case blocker != nil:
				s.explain(false, "row kernel of %s → %s %s: its operand %s is computed from this kernel by another kernel", n.Outs[0].Ref(), c.Op, c.Outs[0].Ref(), blocker.Ref())
			default:
				changes += s.pullProducers(k, n, c, domain, users)
				s.add(k, c)
				if isReduction(c) && !plan.RowStatistic(c) {
					stats = false
				}
				s.explain(true, "row kernel of %s ← %s %s", n.Outs[0].Ref(), c.Op, c.Outs[0].Ref())
				changes++
			}
		}
	}
	if changes > 0 {
		s.sortKernelNodes()
	}
	return changes, nil
}

// pullProducers adds to the row kernel k (started at n) the producers of
// c's operands that k may compute in c's place: unassigned element-wise row
// ops over k's rows whose results only c or k's nodes read (graph outputs
// aside) and whose operands are leaves (inputs, params, constants, through
// views) or such producers in turn. They form a subtree private to k that
// depends on nothing computed, so no dependence between kernels changes.
// It returns how many joined.
func (s *State) pullProducers(k *plan.Kernel, n, c *ir.Node, domain ir.Shape, users map[*ir.Value][]*ir.Node) int {
	added := 0
	for _, a := range c.Args {
		var sub []*ir.Node
		if !s.privateTree(a, k, c, domain, users, &sub) {
			continue
		}
		for _, p := range sub {
			s.add(k, p)
			s.explain(true, "row kernel of %s ← %s %s (an operand of %s %s)", n.Outs[0].Ref(), p.Op, p.Outs[0].Ref(), c.Op, c.Outs[0].Ref())
		}
		added += len(sub)
	}
	return added
}

// privateTree reports whether v is a leaf (through views), or the result of
// an unassigned element-wise row op over domain that only reader or k's
// nodes read and whose operands are private trees too; it appends the ops
// to sub, each after those it reads.
func (s *State) privateTree(v *ir.Value, k *plan.Kernel, reader *ir.Node, domain ir.Shape, users map[*ir.Value][]*ir.Node, sub *[]*ir.Node) bool {
	p := v.Def
	for p != nil && plan.IsView(p.Op) && len(p.Args) > 0 && !p.Op.IsLeaf() {
		p = p.Args[0].Def
	}
	if p == nil || p.Op.IsLeaf() || p.Op == ir.OpConst {
		return true
	}
	if p != v.Def || !s.assignable(p) || !rowOp(p) || isReduction(p) || len(p.Outs) != 1 || s.keptApart(p) != "" || !rowDomain(p).Equal(domain) {
		return false
	}
	for _, u := range users[p.Outs[0]] {
		if u != reader && s.kernelOf[u] != k {
			return false
		}
	}
	for _, a := range p.Args {
		if !s.privateTree(a, k, p, domain, users, sub) {
			return false
		}
	}
	if !slices.Contains(*sub, p) {
		*sub = append(*sub, p)
	}
	return true
}

// sortKernelNodes puts every kernel's nodes in graph order, which
// pullProducers leaves behind the nodes that read them.
func (s *State) sortKernelNodes() {
	pos := map[*ir.Node]int{}
	for i, n := range s.Graph.Nodes {
		pos[n] = i
	}
	for _, k := range s.Plan.Kernels {
		slices.SortFunc(k.Nodes, func(a, b *ir.Node) int { return pos[a] - pos[b] })
	}
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

// lastReduction is the last reduction of kernel k.
func lastReduction(k *plan.Kernel) *ir.Node {
	var last *ir.Node
	for _, n := range k.Nodes {
		if isReduction(n) {
			last = n
		}
	}
	return last
}

// rowDomain is the shape of the rows n works on: its output shape without
// the last axis.
func rowDomain(n *ir.Node) ir.Shape {
	s := n.Outs[0].Type.Shape
	if len(s) == 0 {
		return s
	}
	return s[:len(s)-1]
}
