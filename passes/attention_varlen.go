package passes

import "github.com/fuser-dev/fuser/ir"

// matchVarlen checks Q·Kᵀ and the values of attention over packed queries
// (ir.Attention.Varlen): q [H, N, Dh] packed on its token axis, times the
// transposed keys K [B, G, T, Dh] of its indptr's B sequences, the values
// V of K's shape. Keys stored transposed are explained: the varlen kernel
// reads keys as rows.
func matchVarlen(s *State, q, kt, v *ir.Value, at *ir.Attention, where string) (attentionMatch, bool) {
	k, ok := keysOf(s, kt, at, where)
	if !ok {
		return attentionMatch{}, false
	}
	if at.KeysT {
		s.explain(false, "attention at %s: the keys %s of packed queries are stored transposed: the varlen attention kernel reads keys as rows, [B, G, T, Dh]", where, kt.Ref())
		return attentionMatch{}, false
	}
	qs, ks := q.Type.Shape, k.Type.Shape
	if len(qs) != 3 || q.Packed.Axis != 1 || len(ks) != 4 || !v.Type.Shape.Equal(ks) || !ks[0].Equal(ir.PackedSeqs(q.Packed)) {
		s.explain(false, "attention at %s: packed q %s, K %s, V %s are not [H, N, Dh] packed on the tokens, [B, G, T, Dh], [B, G, T, Dh] of the B sequences of %s", where, q.Type, k.Type, v.Type, q.Packed.Indptr.Ref())
		return attentionMatch{}, false
	}
	at.Varlen = true
	s.explain(true, "attention at %s: the queries %s are tokens packed by %s: varlen attention, each token over its own sequence's keys", where, q.Ref(), q.Packed.Indptr.Ref())
	return attentionMatch{variant: at, args: []*ir.Value{q, k, v}}, true
}
