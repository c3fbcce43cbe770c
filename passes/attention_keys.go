package passes

import "github.com/fuser-dev/fuser/ir"

// matchQK checks the Q·Kᵀ product and the value operand, and recognises a
// cascade (shared prefix concatenated with per-request keys) and packed
// queries (matchVarlen).
func matchQK(s *State, pv, qk *ir.Node, at *ir.Attention, where string) (attentionMatch, bool) {
	q, kt, v := qk.Args[0], qk.Args[1], pv.Args[1]
	if q.Packed != nil {
		return matchVarlen(s, q, kt, v, at, where)
	}
	k, ok := keysOf(s, kt, at, where)
	if !ok {
		return attentionMatch{}, false
	}
	rows := k.Type.Shape
	if at.KeysT {
		rows = ir.Shape{rows[0], rows[1], rows[3], rows[2]}
	}
	if len(q.Type.Shape) != 4 || len(v.Type.Shape) != 4 || !v.Type.Shape.Equal(rows) {
		s.explain(false, "attention at %s: q %s, K %s, V %s are not [B, H, S, Dh], [B, G, T, Dh], [B, G, T, Dh]", where, q.Type, k.Type, v.Type)
		return attentionMatch{}, false
	}
	if at.KeysT {
		if v.Ragged != nil {
			s.explain(false, "attention at %s: the values %s of keys stored transposed have per-sequence lengths (a paged or ragged cache): the attention kernels read keys of such lengths as rows, [B, G, T, Dh]", where, v.Ref())
			return attentionMatch{}, false
		}
		return attentionMatch{variant: at, args: []*ir.Value{q, k, v}}, true
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

// keysOf returns the node's key argument for the key operand kt of Q·Kᵀ:
// K [B, G, T, Dh] when kt is a transpose of it (each key a row of Dh
// elements), or kt itself, [B, G, Dh, T], when the keys are stored
// transposed (keysStoredT: at.KeysT is set, and the kernel reads each key
// as a column). Keys reaching the product any other way (permuted from
// another layout) would need a transposed copy, which no kernel makes;
// that is explained instead.
func keysOf(s *State, kt *ir.Value, at *ir.Attention, where string) (*ir.Value, bool) {
	if len(kt.Type.Shape) != 4 {
		s.explain(false, "attention at %s: the key operand %s is %s, not [B, G, Dh, T]", where, kt.Ref(), kt.Type)
		return nil, false
	}
	t := kt.Def
	if t.Op != ir.OpTranspose {
		if tokensLast(kt) {
			return keysStoredT(s, kt, at, where)
		}
		s.explain(false, "attention at %s: the key operand %s is a %s of %s whose last axis is not the keys' stored one: a copy the attention kernel does not make (it reads K as stored, [B, G, T, Dh] or [B, G, Dh, T])", where, kt.Ref(), t.Op, t.Args[0].Ref())
		return nil, false
	}
	// kt = transpose(x, p) = transpose(transpose(x, r), swapLast2) with
	// r[j] = p[swapLast2[j]]; K = x when r keeps every axis in place.
	r := make([]int, 4)
	for j := range r {
		r[j] = t.Attr.Perm[swapLast2[j]]
	}
	if isIdentity(r) {
		return t.Args[0], true
	}
	if tokensLast(kt) {
		return keysStoredT(s, kt, at, where)
	}
	s.explain(false, "attention at %s: the key operand %s is transpose(%s, %v): K would be %s permuted by %v, a copy the attention kernel does not make (it reads K as stored, [B, G, T, Dh] or [B, G, Dh, T])", where, kt.Ref(), t.Args[0].Ref(), t.Attr.Perm, t.Args[0].Ref(), r)
	return nil, false
}

// keysStoredT takes the key operand kt, [B, G, Dh, T], as keys stored
// transposed: the attention node reads them in that layout (at.KeysT).
// Keys of per-sequence lengths (a paged or ragged cache, which an append
// writes key by key as rows) and a shared prefix concatenated with
// per-request keys (the cascade kernels read keys as rows) are explained
// instead.
func keysStoredT(s *State, kt *ir.Value, at *ir.Attention, where string) (*ir.Value, bool) {
	if kt.Ragged != nil {
		s.explain(false, "attention at %s: the keys %s stored transposed, [B, G, Dh, T], have per-sequence lengths (a paged or ragged cache): the attention kernels read such keys as rows, [B, G, T, Dh]", where, kt.Ref())
		return nil, false
	}
	if d := kt.Def; d.Op == ir.OpConcat && d.Attr.Axis == 3 {
		s.explain(false, "attention at %s: the keys %s stored transposed, [B, G, Dh, T], are a concat along the keys: a cascade's kernels read its keys as rows, [B, G, T, Dh]", where, kt.Ref())
		return nil, false
	}
	at.KeysT = true
	s.explain(true, "attention at %s: the key operand %s (%s) is keys stored transposed, [B, G, Dh, T]: the kernel reads the keys transposed, a key a column", where, kt.Ref(), kt.Type)
	return kt, true
}

// tokensLast reports whether the last axis of v is the last axis of the
// value its views read: through transposes that keep the last axis last
// and reshapes whose last axis divides their operand's (a split of it),
// to a value no view defines.
func tokensLast(v *ir.Value) bool {
	for {
		d := v.Def
		switch d.Op {
		case ir.OpTranspose:
			if p := d.Attr.Perm; p[len(p)-1] != len(p)-1 {
				return false
			}
		case ir.OpReshape:
			if !splitsLast(d.Args[0].Type.Shape, v.Type.Shape) {
				return false
			}
		default:
			return true
		}
		v = d.Args[0]
	}
}

// splitsLast reports whether a reshape of a to o splits a's last axis into
// o's last axes (its last axis among them): o's trailing sizes multiply to
// a's last.
func splitsLast(a, o ir.Shape) bool {
	if len(a) == 0 || len(o) == 0 {
		return false
	}
	p := ir.Const(1)
	for i := len(o) - 1; i >= 0; i-- {
		if p = p.Mul(o[i]); p.Equal(a[len(a)-1]) {
			return true
		}
	}
	return false
}
