package passes

import "github.com/fuser-dev/fuser/ir"

// softmaxForm recognises a softmax written out, e / sum(e) over one axis:
// with e = exp(x - max(x)) it is softmax(x), the safe form; with any other
// e = exp(y), softmax(y), which equals it in exact arithmetic, and the
// softmax kernels compute it in the safe form, so scores that would
// overflow exp as written do not overflow there. A shift of y constant
// along the axis (a max over another axis, a bias per query) is the
// attention pass's to drop.
func softmaxForm(s *State, d *ir.Node, _ map[*ir.Value][]*ir.Node) (bool, error) {
	if d.Op != ir.OpDiv {
		return false, nil
	}
	e, sum := d.Args[0], d.Args[1]
	if sum.Def.Op != ir.OpSum || sum.Def.Args[0] != e || e.Def.Op != ir.OpExp || !e.Type.Shape.Equal(d.Outs[0].Type.Shape) {
		return false, nil
	}
	axis := sum.Def.Attr.Axis
	y := e.Def.Args[0]
	x, safe := y, false
	if sub := y.Def; sub.Op == ir.OpSub {
		mx := sub.Args[1].Def
		if mx.Op == ir.OpReduceMax && mx.Args[0] == sub.Args[0] && mx.Attr.Axis == axis && sub.Args[0].Type.Shape.Equal(d.Outs[0].Type.Shape) {
			x, safe = sub.Args[0], true
		}
	}
	sm, err := s.Graph.NewNode(ir.OpSoftmax, ir.Attr{Axis: axis}, d, x)
	if err != nil {
		return false, err
	}
	s.Graph.ReplaceUses(d.Outs[0], sm.Outs[0])
	if safe {
		s.explain(true, "exp(x - max(x)) / sum(...) at %s is softmax(%s, axis=%d)", d.Pos, x.Ref(), axis)
	} else {
		s.explain(true, "exp(x) / sum(exp(x)) at %s is softmax(%s, axis=%d), computed in the safe form (max subtracted)", d.Pos, x.Ref(), axis)
	}
	return true, nil
}

// softmaxShift drops a shift constant along the softmax axis, softmax(x - b)
// or softmax(x + b) with b of size 1 on that axis: it moves every entry of
// a row alike, which the softmax cancels. b may read x, as max(x) does.
func softmaxShift(s *State, d *ir.Node, _ map[*ir.Value][]*ir.Node) (bool, error) {
	if d.Op != ir.OpSoftmax {
		return false, nil
	}
	sh := d.Args[0].Def
	if sh.Op != ir.OpSub && sh.Op != ir.OpAdd {
		return false, nil
	}
	for i, x := range sh.Args {
		if sh.Op == ir.OpSub && i == 1 {
			break
		}
		b := sh.Args[1-i]
		if !x.Type.Shape.Equal(sh.Outs[0].Type.Shape) || !constantAlong(b, sh.Outs[0], d.Attr.Axis) {
			continue
		}
		sm, err := s.Graph.NewNode(ir.OpSoftmax, d.Attr, d, x)
		if err != nil {
			return false, err
		}
		s.Graph.ReplaceUses(d.Outs[0], sm.Outs[0])
		s.explain(true, "softmax at %s: %s shifts every entry along axis %d by %s alike; softmax cancels it", d.Pos, sh.Op, d.Attr.Axis, b.Ref())
		return true, nil
	}
	return false, nil
}

// constantAlong reports whether b, broadcast to out's shape, is constant
// along out's axis: b lacks the axis or has size 1 there.
func constantAlong(b, out *ir.Value, axis int) bool {
	i := axis - (len(out.Type.Shape) - len(b.Type.Shape))
	return i < 0 || isOneDim(b.Type.Shape[i])
}
