package passes

import "github.com/fuser-dev/fuser/ir"

// attention replaces written attention, softmax(mask(softcap(q·Kᵀ·scale)))·V
// in any order the math allows, with one attention node. Scale, mask
// (causal or sliding window), soft-capping, GQA head groups, paged or ragged
// KV (through the keys' ragged lengths) and a shared-prefix concat (cascade)
// become the node's variant.
func attention(s *State) (int, error) {
	g := s.Graph
	users := g.Users()
	n := 0
	for _, pv := range append([]*ir.Node(nil), g.Nodes...) {
		if pv.Op != ir.OpMatmul || pv.Args[0].Def.Op != ir.OpSoftmax {
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

// matchAttention walks from P·V back to Q·Kᵀ and checks that every step is
// one the flash kernel computes.
func matchAttention(s *State, pv *ir.Node, users map[*ir.Value][]*ir.Node) (attentionMatch, bool) {
	at := &ir.Attention{Scale: 1}
	p := pv.Args[0]
	where := pv.Pos.String()
	sm := p.Def
	if sm.Attr.Axis != len(p.Type.Shape)-1 {
		s.explain(false, "softmax→matmul at %s: softmax is not over the keys (last axis)", where)
		return attentionMatch{}, false
	}
	single := func(v *ir.Value) bool { return len(users[v]) == 1 }
	if !single(p) {
		s.explain(false, "softmax→matmul at %s: the probabilities %s are read elsewhere, so they must be materialised", where, p.Ref())
		return attentionMatch{}, false
	}
	x := sm.Args[0]
	seenCap, seenScale, seenMask := false, false, false
	for {
		if !single(x) {
			s.explain(false, "attention at %s: scores %s are read elsewhere", where, x.Ref())
			return attentionMatch{}, false
		}
		d := x.Def
		switch d.Op {
		case ir.OpCausal, ir.OpWindow:
			if seenCap {
				s.explain(false, "attention at %s: softcap applied after the mask would turn masked scores into -cap", where)
				return attentionMatch{}, false
			}
			seenMask, at.Causal = true, true
			if d.Op == ir.OpWindow {
				w := d.Attr.W
				if !at.Window.IsZero() {
					a, aok := at.Window.Value()
					b, bok := w.Value()
					if !aok || !bok {
						s.explain(false, "attention at %s: nested windows of symbolic sizes", where)
						return attentionMatch{}, false
					}
					w = ir.Const(min(a, b)) // nested windows keep the narrower
				}
				at.Window = w
			}
		case ir.OpSoftcap:
			if seenScale {
				s.explain(false, "attention at %s: a scale outside softcap is not a score scale", where)
				return attentionMatch{}, false
			}
			seenCap, at.Softcap = true, d.Attr.Num
		case ir.OpMul:
			c, ok := constValue(d.Args[1])
			if !ok {
				s.explain(false, "attention at %s: scores multiplied by a tensor %s (not a scale)", where, d.Args[1].Ref())
				return attentionMatch{}, false
			}
			if c <= 0 && !seenMask {
				// Walking inward, no mask seen yet means this scale is applied
				// after the mask: a non-positive one turns -inf into +inf or NaN.
				s.explain(false, "attention at %s: scale %g after the mask flips masked scores", where, c)
				return attentionMatch{}, false
			}
			seenScale = true
			at.Scale *= c
		case ir.OpMatmul:
			return matchQK(s, pv, d, at, where)
		default:
			s.explain(false, "attention at %s: %s between Q·Kᵀ and softmax is not a score modifier", where, d.Op)
			return attentionMatch{}, false
		}
		x = d.Args[0]
	}
}

// matchQK checks the Q·Kᵀ product and the value operand, and recognises a
// cascade (shared prefix concatenated with per-request keys).
func matchQK(s *State, pv, qk *ir.Node, at *ir.Attention, where string) (attentionMatch, bool) {
	q, kt, v := qk.Args[0], qk.Args[1], pv.Args[1]
	rank := len(kt.Type.Shape)
	if kt.Def.Op != ir.OpTranspose || rank != 4 || kt.Def.Attr.Perm[2] != 3 || kt.Def.Attr.Perm[3] != 2 || kt.Def.Attr.Perm[0] != 0 || kt.Def.Attr.Perm[1] != 1 {
		s.explain(false, "attention at %s: the key operand is not transpose(K) of a [B, G, T, Dh] tensor", where)
		return attentionMatch{}, false
	}
	k := kt.Def.Args[0]
	if len(q.Type.Shape) != 4 || len(v.Type.Shape) != 4 || !v.Type.Shape.Equal(k.Type.Shape) {
		s.explain(false, "attention at %s: q, K, V are not [B, H, S, Dh], [B, G, T, Dh], [B, G, T, Dh]", where)
		return attentionMatch{}, false
	}
	if kc, vc := k.Def, v.Def; kc.Op == ir.OpConcat && vc.Op == ir.OpConcat && len(kc.Args) == 2 && len(vc.Args) == 2 && kc.Attr.Axis == 2 && vc.Attr.Axis == 2 {
		kp, vp := kc.Args[0], vc.Args[0]
		if b, ok := kp.Type.Shape[0].Value(); ok && b == 1 && kp.Type.Shape.Equal(vp.Type.Shape) {
			at.Cascade = true
			s.explain(true, "attention at %s: keys are a shared prefix %s concatenated with per-request keys: cascade", where, kp.Ref())
			return attentionMatch{variant: at, args: []*ir.Value{q, kp, vp, kc.Args[1], vc.Args[1]}}, true
		}
	}
	return attentionMatch{variant: at, args: []*ir.Value{q, k, v}}, true
}
