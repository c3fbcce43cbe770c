package passes

import "github.com/fuser-dev/fuser/ir"

// matchQK checks the Q·Kᵀ product and the value operand, and recognises a
// cascade (shared prefix concatenated with per-request keys).
func matchQK(s *State, pv, qk *ir.Node, at *ir.Attention, where string) (attentionMatch, bool) {
	q, kt, v := qk.Args[0], qk.Args[1], pv.Args[1]
	k, ok := keysOf(s, kt, where)
	if !ok {
		return attentionMatch{}, false
	}
	if len(q.Type.Shape) != 4 || len(v.Type.Shape) != 4 || !v.Type.Shape.Equal(k.Type.Shape) {
		s.explain(false, "attention at %s: q %s, K %s, V %s are not [B, H, S, Dh], [B, G, T, Dh], [B, G, T, Dh]", where, q.Type, k.Type, v.Type)
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

// swapLast2 is the transpose of a matrix stack of rank 4.
var swapLast2 = []int{0, 1, 3, 2}

// keysOf returns K [B, G, T, Dh] when the key operand kt of Q·Kᵀ is a
// transpose of it: the attention kernel reads each key as a row of Dh
// elements, so keys reaching the product any other way (stored transposed,
// or permuted from another layout) would need a transposed copy, which it
// does not make; that is explained instead.
func keysOf(s *State, kt *ir.Value, where string) (*ir.Value, bool) {
	if len(kt.Type.Shape) != 4 {
		s.explain(false, "attention at %s: the key operand %s is %s, not [B, G, Dh, T]", where, kt.Ref(), kt.Type)
		return nil, false
	}
	t := kt.Def
	if t.Op != ir.OpTranspose {
		s.explain(false, "attention at %s: the key operand %s (%s %s) is keys stored transposed, [B, G, Dh, T]; the attention kernel reads each key as a row of Dh elements, [B, G, T, Dh]: write q @ transpose(K) with K stored that way", where, kt.Ref(), t.Op, kt.Type)
		return nil, false
	}
	// kt = transpose(x, p) = transpose(transpose(x, r), swapLast2) with
	// r[j] = p[swapLast2[j]]; K = x when r keeps every axis in place.
	r := make([]int, 4)
	for j := range r {
		r[j] = t.Attr.Perm[swapLast2[j]]
	}
	if !isIdentity(r) {
		s.explain(false, "attention at %s: the key operand %s is transpose(%s, %v): K would be %s permuted by %v, a copy the attention kernel does not make (it reads K as stored, [B, G, T, Dh])", where, kt.Ref(), t.Args[0].Ref(), t.Attr.Perm, t.Args[0].Ref(), r)
		return nil, false
	}
	return t.Args[0], true
}
