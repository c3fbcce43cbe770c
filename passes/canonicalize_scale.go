package passes

import "github.com/fuser-dev/fuser/ir"

// constOnRight writes a product with a scalar constant as x * c, the form
// the other rules and the attention pass read.
func constOnRight(s *State, d *ir.Node, _ map[*ir.Value][]*ir.Node) (bool, error) {
	if d.Op != ir.OpMul {
		return false, nil
	}
	_, lc := constValue(d.Args[0])
	_, rc := constValue(d.Args[1])
	if !lc || rc {
		return false, nil
	}
	mul, err := s.Graph.NewNode(ir.OpMul, ir.Attr{}, d, d.Args[1], d.Args[0])
	if err != nil {
		return false, err
	}
	s.Graph.ReplaceUses(d.Outs[0], mul.Outs[0])
	return true, nil
}

// divByConst writes x / c with a constant c as x * (1/c).
func divByConst(s *State, d *ir.Node, _ map[*ir.Value][]*ir.Node) (bool, error) {
	if d.Op != ir.OpDiv {
		return false, nil
	}
	c, ok := constValue(d.Args[1])
	if !ok || c == 0 {
		return false, nil
	}
	g := s.Graph
	inv, err := g.NewNode(ir.OpConst, ir.Attr{Num: 1 / c, To: d.Args[1].Type.DType}, d)
	if err != nil {
		return false, err
	}
	mul, err := g.NewNode(ir.OpMul, ir.Attr{}, d, d.Args[0], inv.Outs[0])
	if err != nil {
		return false, err
	}
	g.ReplaceUses(d.Outs[0], mul.Outs[0])
	return true, nil
}

// scaledOnce returns x and c when v = x * c with c a scalar constant and v
// read by one node only (moving the scale then computes nothing twice).
func scaledOnce(v *ir.Value, users map[*ir.Value][]*ir.Node) (*ir.Value, float64, bool) {
	d := v.Def
	if d.Op != ir.OpMul || len(users[v]) != 1 {
		return nil, 0, false
	}
	c, ok := constValue(d.Args[1])
	return d.Args[0], c, ok
}

// scaleOutward moves a scalar scale x * c past an op that is linear in x
// and moves no value across elements arithmetically: transpose, reshape and
// rope of x become op(x) * c, and a matmul with a scaled operand on either
// side becomes (a @ b) * c. A scale written on the query, on the keys (also
// on the cache, before its transpose), or split between the two thus ends
// as scales of the scores, where the attention pass reads it.
func scaleOutward(s *State, d *ir.Node, users map[*ir.Value][]*ir.Node) (bool, error) {
	switch d.Op {
	case ir.OpTranspose, ir.OpReshape, ir.OpRope:
		x, c, ok := scaledOnce(d.Args[0], users)
		if !ok {
			return false, nil
		}
		return true, rebuildScaled(s, d, 0, x, c)
	case ir.OpMatmul:
		for i := range d.Args {
			x, c, ok := scaledOnce(d.Args[i], users)
			if !ok {
				continue
			}
			if err := rebuildScaled(s, d, i, x, c); err != nil {
				return false, err
			}
			s.explain(true, "moved the scale %g on %s past matmul %s", c, x.Ref(), d.Outs[0].Ref())
			return true, nil
		}
	}
	return false, nil
}

// rebuildScaled replaces d, whose argument i is x * c, with d(x) * c.
func rebuildScaled(s *State, d *ir.Node, i int, x *ir.Value, c float64) error {
	g := s.Graph
	args := append([]*ir.Value(nil), d.Args...)
	args[i] = x
	inner, err := g.NewNode(d.Op, d.Attr, d, args...)
	if err != nil {
		return err
	}
	k, err := g.NewNode(ir.OpConst, ir.Attr{Num: c, To: d.Outs[0].Type.DType}, d)
	if err != nil {
		return err
	}
	mul, err := g.NewNode(ir.OpMul, ir.Attr{}, d, inner.Outs[0], k.Outs[0])
	if err != nil {
		return err
	}
	g.ReplaceUses(d.Outs[0], mul.Outs[0])
	return nil
}

// reciprocalToDiv writes x * (1 / y) as x / y, so that a softmax written
// with the reciprocal of its sum reads like one written with a division.
func reciprocalToDiv(s *State, d *ir.Node, _ map[*ir.Value][]*ir.Node) (bool, error) {
	if d.Op != ir.OpMul {
		return false, nil
	}
	for i, r := range d.Args {
		if r.Def.Op != ir.OpDiv || !d.Args[1-i].Type.Shape.Equal(d.Outs[0].Type.Shape) {
			continue
		}
		if one, ok := constValue(r.Def.Args[0]); !ok || one != 1 {
			continue
		}
		div, err := s.Graph.NewNode(ir.OpDiv, ir.Attr{}, d, d.Args[1-i], r.Def.Args[1])
		if err != nil {
			return false, err
		}
		s.Graph.ReplaceUses(d.Outs[0], div.Outs[0])
		return true, nil
	}
	return false, nil
}
