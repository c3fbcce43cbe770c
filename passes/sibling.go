package passes

import (
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// sibling rewrites matmuls that read the same input with param weights,
// x @ w1, x @ w2, ..., into one matmul with the weights joined along their
// columns, split(x @ concat(w1, w2, ..., axis=-1), [N1, N2, ...], axis=-1):
// the kernel then reads x once, in one launch, and an element-wise op that
// combines the parts (SwiGLU of separate gate and up) is its epilogue, as
// for a weight written joined. The concatenation of params is computed once
// at load (the fold pass). Each part is exactly the product it replaces.
func sibling(s *State) (int, error) {
	groups := s.siblingGroups()
	for _, group := range groups {
		refs := make([]string, len(group))
		for i, m := range group {
			refs[i] = m.Outs[0].Ref() + " (" + m.Args[1].Name + ")"
		}
		s.explain(true, "sibling matmuls of %s: %s read it once, their weights joined at load", group[0].Args[0].Ref(), strings.Join(refs, ", "))
		if err := joinSiblings(s.Graph, group); err != nil {
			return 0, err
		}
	}
	return len(groups), nil
}

// siblingGroups returns, in graph order, the groups of two or more matmuls
// reading the same input whose weights are params (rank 2, so every part
// has the input's rows; a matmul's operands share one dtype) and whose
// results are not graph outputs. It logs the matmuls that read a shared
// input but cannot join.
func (s *State) siblingGroups() [][]*ir.Node {
	byInput := map[*ir.Value][]*ir.Node{}
	var order []*ir.Value
	for _, n := range s.Graph.Nodes {
		if n.Op != ir.OpMatmul {
			continue
		}
		x := n.Args[0]
		if byInput[x] == nil {
			order = append(order, x)
		}
		byInput[x] = append(byInput[x], n)
	}
	isOutput := map[*ir.Value]bool{}
	for _, o := range s.Graph.Outputs {
		isOutput[o] = true
	}
	var groups [][]*ir.Node
	for _, x := range order {
		ms := byInput[x]
		if len(ms) < 2 {
			continue
		}
		var group []*ir.Node
		var refused []string
		for _, m := range ms {
			why := siblingWeight(m.Args[1])
			if isOutput[m.Outs[0]] {
				why = "its result is a graph output, a buffer of its own, not part of a joined one"
			}
			if why != "" {
				refused = append(refused, m.Outs[0].Ref()+": "+why)
				continue
			}
			group = append(group, m)
		}
		if len(group) >= 2 {
			groups = append(groups, group)
		}
		for _, r := range refused {
			s.explain(false, "sibling matmuls of %s: %s", x.Ref(), r)
		}
	}
	return groups
}

// siblingWeight says why weight w cannot be joined with other weights at
// load, or "" when it can: it must be a rank-2 param read as stored.
func siblingWeight(w *ir.Value) string {
	switch {
	case w.Def.Op == ir.OpTranspose:
		return "its weight is a transposed view (joining it would need a transposed copy)"
	case w.Def.Op != ir.OpParam:
		return "its weight is computed, not a param"
	case len(w.Type.Shape) != 2:
		return "its weight has batch axes"
	}
	return ""
}

// joinSiblings replaces the matmuls of group (same input, param weights)
// by one over their concatenated weights and a split of its result.
func joinSiblings(g *ir.Graph, group []*ir.Node) error {
	first := group[0]
	ws := make([]*ir.Value, len(group))
	sizes := make([]ir.Dim, len(group))
	names := make([]string, len(group))
	for i, m := range group {
		ws[i] = m.Args[1]
		sizes[i] = ws[i].Type.Shape[1]
		names[i] = ws[i].Name
	}
	cat, err := g.NewNode(ir.OpConcat, ir.Attr{Axis: 1}, first, ws...)
	if err != nil {
		return err
	}
	cat.Outs[0].Name = strings.Join(names, "_")
	x := first.Args[0]
	mm, err := g.NewNode(ir.OpMatmul, ir.Attr{}, first, x, cat.Outs[0])
	if err != nil {
		return err
	}
	parts, err := g.NewNode(ir.OpSplit, ir.Attr{Axis: len(x.Type.Shape) - 1, Sizes: sizes}, first, mm.Outs[0])
	if err != nil {
		return err
	}
	for i, m := range group {
		g.ReplaceUses(m.Outs[0], parts.Outs[i])
	}
	g.RemoveDead()
	return nil
}
