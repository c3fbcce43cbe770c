package passes

import "github.com/fuser-dev/fuser/ir"

// scoreWalk is the state of the walk from the softmax in to Q·Kᵀ: what the
// ops seen so far (the outer ones) imply.
type scoreWalk struct {
	at                           *ir.Attention
	where                        string
	seenCap, seenScale, seenMask bool
}

// step takes one score modifier d (defining x) into the variant and returns
// the scores it modifies, or explains why d is not one the kernel computes.
func (w *scoreWalk) step(s *State, d *ir.Node, x *ir.Value) (*ir.Value, bool) {
	at, where := w.at, w.where
	switch d.Op {
	case ir.OpCausal, ir.OpWindow:
		if w.seenCap {
			s.explain(false, "attention at %s: softcap applied after the mask would turn masked scores into -cap", where)
			return nil, false
		}
		w.seenMask, at.Causal = true, true
		if d.Op == ir.OpWindow {
			win := d.Attr.W
			if !at.Window.IsZero() {
				a, aok := at.Window.Value()
				b, bok := win.Value()
				if !aok || !bok {
					s.explain(false, "attention at %s: nested windows of symbolic sizes", where)
					return nil, false
				}
				win = ir.Const(min(a, b)) // nested windows keep the narrower
			}
			at.Window = win
		}
	case ir.OpSoftcap:
		if w.seenScale {
			s.explain(false, "attention at %s: a scale outside softcap is not a score scale", where)
			return nil, false
		}
		w.seenCap, at.Softcap = true, d.Attr.Num
	case ir.OpMul:
		c, ok := constValue(d.Args[1])
		if !ok {
			s.explain(false, "attention at %s: %s multiplies the scores by a tensor %s (not a scale)", where, d.Outs[0].Ref(), d.Args[1].Ref())
			return nil, false
		}
		if c <= 0 && !w.seenMask {
			// Walking inward, no mask seen yet means this scale is applied
			// after the mask: a non-positive one turns -inf into +inf or NaN.
			s.explain(false, "attention at %s: scale %g after the mask flips masked scores", where, c)
			return nil, false
		}
		w.seenScale = true
		at.Scale *= c
	case ir.OpAdd, ir.OpSub:
		return w.bias(s, d, x)
	default:
		s.explain(false, "attention at %s: %s %s between Q·Kᵀ and softmax is not a score modifier the attention kernel computes", where, d.Op, d.Outs[0].Ref())
		return nil, false
	}
	return d.Args[0], true
}

// bias takes scores ± b: a b constant along the keys (a scalar, or size 1
// on the last axis) shifts every score of a row alike, which softmax
// cancels, unless softcap lies between it and the softmax. A bias that
// varies along the keys changes the probabilities; the kernel has none.
func (w *scoreWalk) bias(s *State, d *ir.Node, x *ir.Value) (*ir.Value, bool) {
	scores, b := d.Args[0], d.Args[1]
	if d.Op == ir.OpAdd && !scores.Type.Shape.Equal(x.Type.Shape) {
		scores, b = b, scores
	}
	if !scores.Type.Shape.Equal(x.Type.Shape) {
		s.explain(false, "attention at %s: %s %s is not scores ± a bias: its first operand %s is %s, the scores %s", w.where, d.Op, x.Ref(), scores.Ref(), scores.Type, x.Type)
		return nil, false
	}
	if !constantAlong(b, x, len(x.Type.Shape)-1) {
		s.explain(false, "attention at %s: %s %s adds %s, which varies along the keys: the attention kernel has no score bias", w.where, d.Op, x.Ref(), b.Ref())
		return nil, false
	}
	if w.seenCap {
		s.explain(false, "attention at %s: %s %s shifts the scores inside softcap, which does not cancel in the softmax", w.where, d.Op, x.Ref())
		return nil, false
	}
	s.explain(true, "attention at %s: %s %s shifts every score of a row by %s alike; softmax cancels it", w.where, d.Op, x.Ref(), b.Ref())
	return scores, true
}

// isOneDim reports whether an extent is the constant 1.
func isOneDim(d ir.Dim) bool {
	v, ok := d.Value()
	return ok && v == 1
}
