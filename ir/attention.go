package ir

// AttentionKV returns the key and value arguments of attention node n, in
// key order (a cascade's prefix pair first): its arguments after the
// query, without the bias.
func (n *Node) AttentionKV() []*Value {
	end := len(n.Args)
	if n.AttentionBias() != nil {
		end--
	}
	return n.Args[1:end]
}

// AttentionBias returns the score bias of attention node n (its last
// argument), or nil when it has none.
func (n *Node) AttentionBias() *Value {
	if n.Op != OpAttention || n.Attr.Attn == nil || !n.Attr.Attn.Bias || len(n.Args) == 0 {
		return nil
	}
	return n.Args[len(n.Args)-1]
}

// BiasShape is the bias shape aligned to the scores [B, H, S, N]: the
// axes a lower-rank bias lacks on the left are 1.
func BiasShape(bias *Value) Shape {
	sh := bias.Type.Shape
	out := make(Shape, 0, 4)
	for range 4 - len(sh) {
		out = append(out, Const(1))
	}
	return append(out, sh...)
}

// checkAttentionBias checks the bias of an attention node with queries
// qs [B, H, S, Dh] over keys keys: a float tensor of rank 1 to 4 that
// broadcasts to the scores, each axis the scores' or 1 (the key axis the
// scores', not 1: a bias constant along the keys cancels in the softmax
// and is never an argument).
func checkAttentionBias(bias *Value, qs Shape, keys Dim) *TypeError {
	if !bias.Type.DType.IsFloat() || len(bias.Type.Shape) < 1 || len(bias.Type.Shape) > 4 {
		return typeErr("", "attention bias must be a float tensor of rank 1 to 4, got %s", bias.Type)
	}
	want := Shape{qs[0], qs[1], qs[2], keys}
	for i, d := range BiasShape(bias) {
		if i == 3 && !d.Equal(keys) || i < 3 && !d.Equal(want[i]) && !isOne(d) {
			return typeErr("each axis of the bias is the scores' or 1, the keys' axis the scores'", "attention bias %s does not broadcast to the scores %s", bias.Type, want)
		}
	}
	return nil
}

// KeyAxis is the token axis of the node's K arguments: 3 where the keys are
// stored transposed ([B, G, Dh, T], KeysT), 2 otherwise ([B, G, T, Dh]).
func (at *Attention) KeyAxis() int {
	if at.KeysT {
		return 3
	}
	return 2
}

// KeyRows returns K argument k of attention node n in the key-major order
// [B, G, T, Dh]: its shape, with the last two axes swapped where the keys
// are stored transposed.
func (n *Node) KeyRows(k *Value) Shape {
	sh := k.Type.Shape
	if n.Attr.Attn == nil || !n.Attr.Attn.KeysT || len(sh) != 4 {
		return sh
	}
	return Shape{sh[0], sh[1], sh[3], sh[2]}
}

// AttentionKeys returns the own keys K of attention node n: the K of its
// last (K, V) pair.
func (n *Node) AttentionKeys() *Value {
	kv := n.AttentionKV()
	return kv[len(kv)-2]
}
