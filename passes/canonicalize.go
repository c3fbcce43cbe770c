package passes

import (
	"fmt"
	"math"

	"github.com/fuser-dev/fuser/ir"
)

// canonicalize rewrites the graph into normal forms the later passes match:
//   - x / c with a constant c becomes x * (1/c);
//   - (q * c) @ k becomes (q @ k) * c, so a scale written on q reads like one
//     written on the scores;
//   - exp(x - max(x)) / sum(exp(x - max(x))) over one axis becomes softmax(x);
//   - common subexpressions are merged and dead nodes removed.
func canonicalize(s *State) (int, error) {
	changes := 0
	for _, rule := range []func(*State) (int, error){divByConst, scaleAfterMatmul, softmaxForm} {
		n, err := rule(s)
		if err != nil {
			return changes, err
		}
		changes += n
	}
	changes += cse(s.Graph)
	changes += s.Graph.RemoveDead()
	return changes, nil
}

// constValue returns the value of a scalar constant.
func constValue(v *ir.Value) (float64, bool) {
	if v.Def.Op == ir.OpConst {
		return v.Def.Attr.Num, true
	}
	return 0, false
}

func divByConst(s *State) (int, error) {
	g := s.Graph
	n := 0
	for _, d := range append([]*ir.Node(nil), g.Nodes...) {
		if d.Op != ir.OpDiv {
			continue
		}
		c, ok := constValue(d.Args[1])
		if !ok || c == 0 {
			continue
		}
		inv, err := g.NewNode(ir.OpConst, ir.Attr{Num: 1 / c, To: d.Args[1].Type.DType}, d)
		if err != nil {
			return n, err
		}
		mul, err := g.NewNode(ir.OpMul, ir.Attr{}, d, d.Args[0], inv.Outs[0])
		if err != nil {
			return n, err
		}
		g.ReplaceUses(d.Outs[0], mul.Outs[0])
		n++
	}
	g.RemoveDead()
	return n, nil
}

// scaleAfterMatmul moves a scalar factor on a matmul's left operand past the
// matmul.
func scaleAfterMatmul(s *State) (int, error) {
	g := s.Graph
	users := g.Users()
	n := 0
	for _, m := range append([]*ir.Node(nil), g.Nodes...) {
		if m.Op != ir.OpMatmul {
			continue
		}
		scaled := m.Args[0].Def
		if scaled.Op != ir.OpMul || len(users[m.Args[0]]) != 1 {
			continue
		}
		c, ok := constValue(scaled.Args[1])
		if !ok {
			continue
		}
		mm, err := g.NewNode(ir.OpMatmul, ir.Attr{}, m, scaled.Args[0], m.Args[1])
		if err != nil {
			return n, err
		}
		k, err := g.NewNode(ir.OpConst, ir.Attr{Num: c, To: m.Outs[0].Type.DType}, m)
		if err != nil {
			return n, err
		}
		mul, err := g.NewNode(ir.OpMul, ir.Attr{}, m, mm.Outs[0], k.Outs[0])
		if err != nil {
			return n, err
		}
		g.ReplaceUses(m.Outs[0], mul.Outs[0])
		s.explain(true, "moved the scale %g on %s past matmul %s", c, scaled.Args[0].Ref(), m.Outs[0].Ref())
		n++
	}
	g.RemoveDead()
	return n, nil
}

// softmaxForm recognises a decomposed softmax: div(e, sum(e)) with
// e = exp(sub(x, reduce_max(x))), all over the same axis.
func softmaxForm(s *State) (int, error) {
	g := s.Graph
	n := 0
	for _, d := range append([]*ir.Node(nil), g.Nodes...) {
		if d.Op != ir.OpDiv {
			continue
		}
		e, sum := d.Args[0], d.Args[1]
		if sum.Def.Op != ir.OpSum || sum.Def.Args[0] != e || e.Def.Op != ir.OpExp {
			continue
		}
		sub := e.Def.Args[0].Def
		if sub.Op != ir.OpSub {
			continue
		}
		x, mx := sub.Args[0], sub.Args[1]
		axis := sum.Def.Attr.Axis
		if mx.Def.Op != ir.OpReduceMax || mx.Def.Args[0] != x || mx.Def.Attr.Axis != axis || !x.Type.Shape.Equal(d.Outs[0].Type.Shape) {
			s.explain(false, "%s looks like a softmax but does not subtract the max of the same axis", d.Outs[0].Ref())
			continue
		}
		sm, err := g.NewNode(ir.OpSoftmax, ir.Attr{Axis: axis}, d, x)
		if err != nil {
			return n, err
		}
		g.ReplaceUses(d.Outs[0], sm.Outs[0])
		s.explain(true, "exp(x - max(x)) / sum(...) at %s is softmax(%s, axis=%d)", d.Pos, x.Ref(), axis)
		n++
	}
	g.RemoveDead()
	return n, nil
}

// cse merges nodes with the same op, arguments and attributes.
func cse(g *ir.Graph) int {
	seen := map[string]*ir.Node{}
	n := 0
	for _, nd := range g.Nodes {
		if nd.Op.IsLeaf() || nd.Op == ir.OpAppend {
			continue
		}
		key := nd.Op.String()
		for _, a := range nd.Args {
			key += fmt.Sprintf(" %d", a.ID)
		}
		key += " " + attrKey(nd)
		if prev, ok := seen[key]; ok {
			for i, o := range nd.Outs {
				g.ReplaceUses(o, prev.Outs[i])
			}
			n++
			continue
		}
		seen[key] = nd
	}
	return n
}

// attrKey prints the attributes that distinguish nodes of one op, with the
// dtype of constants.
func attrKey(n *ir.Node) string {
	a := n.Attr
	key := fmt.Sprintf("%d %v %s %s %s %x %d %s %d", a.Axis, a.Perm, shapeKey(a.Sizes), a.Start, a.End, math.Float64bits(a.Num), a.K, a.W, a.To)
	if at := a.Attn; at != nil {
		key += fmt.Sprintf(" %v", *at)
	}
	return key
}

func shapeKey(ds []ir.Dim) string { return ir.Shape(ds).String() }
