package ir

// inferVarlenAttention types an attention node over packed queries (see
// Attention.Varlen): q [H, N, Dh] packed on axis 1, K and V [B, G, T, Dh]
// of the indptr's B sequences, G dividing H; the result is q's type,
// packed alike.
func inferVarlenAttention(n *Node) ([]Result, *TypeError) {
	at, q := n.Attr.Attn, n.Args[0]
	if !at.Varlen || q.Packed == nil {
		return nil, typeErr("", "attention over packed queries needs the varlen variant and queries packed on their token axis, got %s", q.Type)
	}
	if at.Cascade || at.Bias || at.KeysT || len(n.Args) != 3 {
		return nil, typeErr("", "varlen attention takes q, K and V only: no cascade, bias or keys stored transposed")
	}
	qs, k, v := q.Type.Shape, n.Args[1], n.Args[2]
	if len(qs) != 3 || q.Packed.Axis != 1 {
		return nil, typeErr("", "varlen attention query must be [H, N, Dh] packed on axis 1, got %s", q.Type)
	}
	ks := k.Type.Shape
	if len(ks) != 4 || !ks.Equal(v.Type.Shape) || !ks[3].Equal(qs[2]) || k.Type.DType != q.Type.DType || v.Type.DType != q.Type.DType {
		return nil, typeErr("", "varlen attention keys and values must be [B, G, T, %s] %s, got %s and %s", qs[2], q.Type.DType, k.Type, v.Type)
	}
	if seqs := PackedSeqs(q.Packed); !ks[0].Equal(seqs) {
		return nil, typeErr("", "varlen attention keys %s are not of the %s sequences of %s", ks, seqs, q.Packed.Indptr.Ref())
	}
	if !headsDivide(qs[0], ks[1]) {
		return nil, typeErr("each kv head serves H/G query heads", "attention: %s kv heads do not divide %s query heads", ks[1], qs[0])
	}
	return []Result{{Type: q.Type, Packed: q.Packed}}, nil
}
