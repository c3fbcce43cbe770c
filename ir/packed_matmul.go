package ir

// inferPackedMatmul types a matmul with a packed operand. A packed left
// operand [..., N, K] times a weight [K, M] is a matmul over N rows. Times
// a per-sequence right operand [B, ..., K, M] (one more axis, first, of the
// B sequences of the indptr) it pairs each token with its own sequence:
// row n of the result reads the matrix of sequence b, Indptr[b] <= n <
// Indptr[b+1] (the attention scores q @ transpose(K) and the output p @ V
// of packed queries over a per-sequence cache). The right operand is never
// packed, and the tokens are never contracted.
func inferPackedMatmul(n *Node) ([]Result, *TypeError) {
	a, b := n.Args[0], n.Args[1]
	if err := sameDType("matmul", a, b); err != nil {
		return nil, err
	}
	sa, sb := a.Type.Shape, b.Type.Shape
	if b.Packed != nil || a.Packed == nil {
		return nil, typeErr("put the packed tokens on the left: x @ w, q @ transpose(K)", "matmul with a packed right operand %s", b.Type)
	}
	p := a.Packed
	if len(sa) < 2 || len(sb) < 2 || !sa[len(sa)-1].Equal(sb[len(sb)-2]) {
		return nil, typeErr("the last axis of the left operand must equal the second-to-last of the right", "matmul of %s and %s", sa, sb)
	}
	if p.Axis == len(sa)-1 {
		return nil, typeErr("each token is a row of its own; contract another axis", "matmul contracts the packed token axis of %s", a.Type)
	}
	if len(sb) == 2 {
		shape := append(append(Shape(nil), sa[:len(sa)-1]...), sb[1])
		return []Result{{Type: Type{DType: a.Type.DType, Shape: shape}, Ragged: a.Ragged, Packed: p}}, nil
	}
	seqs := PackedSeqs(p)
	if len(sb) != len(sa)+1 || p.Axis != len(sa)-2 || !sb[0].Equal(seqs) {
		return nil, typeErr("tokens [..., N, K] pair with their own sequence's [B, ..., K, M], B the indptr's sequences; or multiply by a weight [K, M]", "matmul of packed %s (tokens on axis %d) and %s: the right operand needs a first axis of the %s sequences and the rest of the left's rank", sa, p.Axis, sb, seqs)
	}
	batch, err := matmulBatch(sa[:len(sa)-2], sb[1:len(sb)-2])
	if err != nil {
		return nil, err
	}
	shape := append(append(Shape(nil), batch...), sa[len(sa)-2], sb[len(sb)-1])
	rank := len(shape)
	var r *Ragged
	if rg := a.Ragged; rg != nil && rg.Axis != len(sa)-1 {
		return nil, typeErr("", "matmul of packed %s with a variable-length axis %d that is not contracted", a.Type, rg.Axis)
	}
	if rg := b.Ragged; rg != nil && rg.Axis != len(sb)-2 {
		// The right operand's sequences are the tokens' own: its lengths
		// now vary along the token axis.
		if rg.Batch != 0 || rg.Axis != len(sb)-1 {
			return nil, typeErr("", "matmul of packed tokens and %s with a variable-length axis %d of sequence axis %d", b.Type, rg.Axis, rg.Batch)
		}
		c := *rg
		c.Axis, c.Batch = rank-1, rank-2
		r = &c
	}
	return []Result{{Type: Type{DType: a.Type.DType, Shape: shape}, Ragged: r, Packed: &Packed{Axis: rank - 2, Indptr: p.Indptr}}}, nil
}

// inferPackedAppend types append(kv, k, v) of packed new tokens k, v
// [G, N, Dh] into a paged or ragged cache: sequence b's tokens Indptr[b]
// .. Indptr[b+1]-1 go after its cached ones. The whole caches [B, G, T + N,
// Dh] hold the layout's lengths (after the append).
func inferPackedAppend(kv, k, v *Value) ([]Result, *TypeError) {
	s := kv.Type.Shape
	if kv.Ragged == nil {
		return nil, typeErr("declare the cache @ paged(...) or @ ragged(...): each sequence appends its own number of tokens", "append of packed tokens to a contiguous cache")
	}
	for _, x := range []*Value{k, v} {
		if err := sameDType("append", kv, x); err != nil {
			return nil, err
		}
		xs := x.Type.Shape
		if x.Packed == nil || x.Packed.Indptr != k.Packed.Indptr || x.Packed.Axis != 1 || len(xs) != 3 || !xs[0].Equal(s[2]) || !xs[2].Equal(s[4]) || !xs.Equal(k.Type.Shape) {
			return nil, typeErr("transpose the new keys and values to [G, N, Dh], both packed by the same indptr", "append of packed tokens needs k and v of shape [%s, N, %s] packed on axis 1, got %s and %s", s[2], s[4], k.Type, v.Type)
		}
	}
	if seqs := PackedSeqs(k.Packed); !seqs.Equal(s[1]) {
		return nil, typeErr("the tokens' indptr has one entry more than the cache's batch", "append of tokens of %s packed sequences to a cache of batch %s", seqs, s[1])
	}
	r := &Ragged{Axis: 2, Batch: 0, Lens: kv.Ragged.Lens, Extra: kv.Ragged.Extra}
	t := Type{DType: kv.Type.DType, Shape: Shape{s[1], s[2], s[3].Add(k.Type.Shape[1]), s[4]}}
	return []Result{{Type: t, Ragged: r}, {Type: t, Ragged: r}}, nil
}
