package passes

import "github.com/fuser-dev/fuser/ir"

// scoreWalk is the state of the walk from the softmax in to Q·Kᵀ: what the
// ops seen so far (the outer ones) imply.
type scoreWalk struct {
	at                           *ir.Attention
	where                        string
	seenCap, seenScale, seenMask bool
	// bias is the key-varying score bias taken, nil before one is.
	keyed *ir.Value
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
		if w.keyed != nil {
			s.explain(false, "attention at %s: the bias %s is added after softcap; the attention kernel adds a bias before the cap", where, w.keyed.Ref())
			return nil, false
		}
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
// varies along the keys changes the probabilities: the kernel adds it
// (keyBias).
func (w *scoreWalk) bias(s *State, d *ir.Node, x *ir.Value) (*ir.Value, bool) {
	scores, b := d.Args[0], d.Args[1]
	if d.Op == ir.OpAdd && (!scores.Type.Shape.Equal(x.Type.Shape) || !scoreLike(scores) && scoreLike(b) && b.Type.Shape.Equal(x.Type.Shape)) {
		scores, b = b, scores
	}
	if !scores.Type.Shape.Equal(x.Type.Shape) {
		s.explain(false, "attention at %s: %s %s is not scores ± a bias: its first operand %s is %s, the scores %s", w.where, d.Op, x.Ref(), scores.Ref(), scores.Type, x.Type)
		return nil, false
	}
	if !constantAlong(b, x, len(x.Type.Shape)-1) {
		return w.keyBias(s, d, x, scores, b)
	}
	if w.seenCap {
		s.explain(false, "attention at %s: %s %s shifts the scores inside softcap, which does not cancel in the softmax", w.where, d.Op, x.Ref())
		return nil, false
	}
	s.explain(true, "attention at %s: %s %s shifts every score of a row by %s alike; softmax cancels it", w.where, d.Op, x.Ref(), b.Ref())
	return scores, true
}

// scoreLike reports whether v may be the scores of a b + scores whose two
// operands have the scores' shape: computed by Q·Kᵀ or a score modifier,
// not a leaf (an input, a parameter) nor any other op.
func scoreLike(v *ir.Value) bool {
	switch v.Def.Op {
	case ir.OpMatmul, ir.OpCausal, ir.OpWindow, ir.OpSoftcap, ir.OpMul, ir.OpAdd, ir.OpSub:
		return true
	}
	return false
}

// isOneDim reports whether an extent is the constant 1.
func isOneDim(d ir.Dim) bool {
	v, ok := d.Value()
	return ok && v == 1
}

// keyBias takes scores ± b with b varying along the keys as the kernel's
// score bias: it adds b times the scales seen so far (those written outside
// the addition; negated for a subtraction) to the scaled scores, before
// softcap and the mask; a bias widened to f32 by a cast is read as it is
// stored. One bias a node: a second is explained, as is a
// bias added outside softcap (the softcap step) or one whose values have
// per-sequence lengths.
func (w *scoreWalk) keyBias(s *State, d *ir.Node, x, scores, b *ir.Value) (*ir.Value, bool) {
	if w.keyed != nil {
		s.explain(false, "attention at %s: %s %s adds %s, a second bias varying along the keys after %s; the attention kernel adds one", w.where, d.Op, x.Ref(), b.Ref(), w.keyed.Ref())
		return nil, false
	}
	if b.Ragged != nil {
		s.explain(false, "attention at %s: %s %s adds %s, a bias with per-sequence lengths; the attention kernel reads a dense bias", w.where, d.Op, x.Ref(), b.Ref())
		return nil, false
	}
	sign := 1.0
	if d.Op == ir.OpSub {
		sign = -1
	}
	if c := b.Def; c.Op == ir.OpCast && b.Type.DType == ir.F32 && c.Args[0].Type.DType.IsFloat() && c.Args[0].Ragged == nil {
		// The kernels read a bias of any float dtype as f32: the exact
		// widening is theirs.
		b = c.Args[0]
	}
	w.keyed = b
	w.at.Bias, w.at.BiasScale = true, sign*w.at.Scale
	s.explain(true, "attention at %s: %s %s adds %s, which varies along the keys: the attention kernel adds it to each score (times %g) before softcap and the mask", w.where, d.Op, x.Ref(), b.Ref(), w.at.BiasScale)
	return scores, true
}
