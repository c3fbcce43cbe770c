package passes

import "github.com/fuser-dev/fuser/ir"

// attention replaces written attention, softmax(mask(softcap(q·Kᵀ·scale)))·V
// in any order the math allows, with one attention node. Scale, mask
// (causal or sliding window), soft-capping, GQA head groups, paged or ragged
// KV (through the keys' ragged lengths) and a shared-prefix concat (cascade)
// become the node's variant; a bias constant along the keys drops out of
// the softmax. canonicalize has already brought scales, softmax and
// transposes to one form.
func attention(s *State) (int, error) {
	g := s.Graph
	users := g.Users()
	n := 0
	for _, pv := range append([]*ir.Node(nil), g.Nodes...) {
		if pv.Op != ir.OpMatmul {
			continue
		}
		if pv.Args[0].Def.Op != ir.OpSoftmax {
			explainNotSoftmax(s, pv)
			continue
		}
		node, ok := matchAttention(s, pv, users)
		if !ok {
			continue
		}
		at, err := g.NewNode(ir.OpAttention, ir.Attr{Attn: node.variant}, pv, node.args...)
		if err != nil {
			s.explain(false, "attention at %s: %v", pv.Pos, err)
			continue
		}
		g.ReplaceUses(pv.Outs[0], at.Outs[0])
		s.explain(true, "attention at %s → %s", pv.Pos, at)
		n++
	}
	g.RemoveDead()
	return n, nil
}

type attentionMatch struct {
	variant *ir.Attention
	args    []*ir.Value
}

// scoreWalk is the state of the walk from the softmax in to Q·Kᵀ: what the
// ops seen so far (the outer ones) imply.
type scoreWalk struct {
	at                           *ir.Attention
	where                        string
	seenCap, seenScale, seenMask bool
}

// matchAttention walks from P·V back to Q·Kᵀ and checks that every step is
// one the flash kernel computes; the first one that is not is explained.
func matchAttention(s *State, pv *ir.Node, users map[*ir.Value][]*ir.Node) (attentionMatch, bool) {
	w := &scoreWalk{at: &ir.Attention{Scale: 1}, where: pv.Pos.String()}
	p := pv.Args[0]
	sm := p.Def
	if sm.Attr.Axis != len(p.Type.Shape)-1 {
		s.explain(false, "softmax→matmul at %s: softmax is not over the keys (last axis)", w.where)
		return attentionMatch{}, false
	}
	single := func(v *ir.Value) bool { return len(users[v]) == 1 }
	if !single(p) {
		s.explain(false, "softmax→matmul at %s: the probabilities %s are read elsewhere, so they must be materialised", w.where, p.Ref())
		return attentionMatch{}, false
	}
	x := sm.Args[0]
	for {
		if !single(x) {
			s.explain(false, "attention at %s: scores %s are read elsewhere", w.where, x.Ref())
			return attentionMatch{}, false
		}
		d := x.Def
		if d.Op == ir.OpMatmul {
			return matchQK(s, pv, d, w.at, w.where)
		}
		next, ok := w.step(s, d, x)
		if !ok {
			return attentionMatch{}, false
		}
		x = next
	}
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

// explainNotSoftmax explains a P·V candidate, a matmul of two stacks of
// matrices whose left operand is computed from an exp but is not a
// softmax: it names the op that is not exp(s) / sum(exp(s)).
func explainNotSoftmax(s *State, pv *ir.Node) {
	p := pv.Args[0]
	if len(p.Type.Shape) != 4 || len(pv.Args[1].Type.Shape) != 4 || !readsExp(p, 3) {
		return
	}
	d := p.Def
	if d.Op == ir.OpDiv && d.Args[0].Def.Op == ir.OpExp && d.Args[1].Def.Op == ir.OpSum && d.Args[1].Def.Args[0] != d.Args[0] {
		s.explain(false, "softmax→matmul at %s: %s divides %s by %s, a sum of %s, not of the exponentials themselves: not a softmax", pv.Pos, p.Ref(), d.Args[0].Ref(), d.Args[1].Ref(), d.Args[1].Def.Args[0].Ref())
		return
	}
	s.explain(false, "softmax→matmul at %s: the probabilities %s are %s, not softmax(s) or exp(s) / sum(exp(s)) over the keys", pv.Pos, p.Ref(), d.Op)
}

// readsExp reports whether v is computed from an exp within depth ops.
func readsExp(v *ir.Value, depth int) bool {
	if v.Def.Op == ir.OpExp {
		return true
	}
	if depth == 0 {
		return false
	}
	for _, a := range v.Def.Args {
		if readsExp(a, depth-1) {
			return true
		}
	}
	return false
}
