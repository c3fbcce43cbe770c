package ir

// Packed marks a token axis that holds the tokens of a batch of sequences
// back to back (FlashAttention's cu_seqlens_q, FlashInfer's qo_indptr):
// index n of Axis belongs to sequence b iff Indptr[b] <= n < Indptr[b+1],
// Indptr being an i32[B+1] input. Ops that treat tokens as rows (element-wise
// ops, reductions over other axes, matmuls with a weight) ignore it; append
// and the attention matmuls pair each token with its own sequence.
type Packed struct {
	Axis   int
	Indptr *Value
}

// packedOf returns the packed marker of the result of a node whose op does
// not pair tokens with sequences (every op but rope, matmul and append,
// which set their own): the marker of its packed arguments, moved to the
// result's axes, or an error where the op would mix tokens of different
// sequences or packed and unpacked operands.
func packedOf(n *Node, res []Result) (*Packed, *TypeError) {
	var px *Value
	for _, a := range n.Args {
		if a.Packed != nil {
			px = a
			break
		}
	}
	if px == nil {
		return nil, nil
	}
	a, p := n.Args[0], px.Packed
	switch n.Op {
	case OpSum, OpReduceMax, OpMean, OpSoftmax, OpTopK, OpSplit, OpSlice, OpConcat:
		if n.Attr.Axis == p.Axis {
			return nil, typeErr("each token is a row of its own; work along another axis", "%s along the packed token axis %d of %s", n.Op, p.Axis, a.Type)
		}
		if n.Op == OpConcat {
			return p, samePacked(n.Args, res[0].Type.Shape)
		}
		return p, nil
	case OpReshape:
		return packedReshape(a, Shape(n.Attr.Sizes))
	case OpTranspose:
		for i, ax := range n.Attr.Perm {
			if ax == p.Axis {
				return &Packed{Axis: i, Indptr: p.Indptr}, nil
			}
		}
		return nil, typeErr("", "transpose drops the packed axis %d", p.Axis)
	case OpGather:
		if n.Args[0].Packed != nil {
			return nil, typeErr("gather rows of a table of weights", "gather from a packed table")
		}
		return p, nil
	}
	out := res[0].Type.Shape
	return &Packed{Axis: p.Axis + len(out) - len(px.Type.Shape), Indptr: p.Indptr}, samePacked(n.Args, out)
}

// samePacked checks that the operands of an element-wise op or a concat,
// aligned from the right to the result shape out, agree on the packed
// axis: every packed operand packs the same axis by the same indptr, and
// an unpacked one is broadcast along it (size 1 or no such axis).
func samePacked(args []*Value, out Shape) *TypeError {
	ax := -1
	var indptr *Value
	for _, x := range args {
		if x.Packed == nil {
			continue
		}
		a := x.Packed.Axis + len(out) - len(x.Type.Shape)
		if ax >= 0 && (a != ax || x.Packed.Indptr != indptr) {
			return typeErr("combine tokens packed by one indptr, on one axis", "operands packed differently (axis %d by %s, axis %d by %s)", ax, indptr.Ref(), a, x.Packed.Indptr.Ref())
		}
		ax, indptr = a, x.Packed.Indptr
	}
	for _, x := range args {
		if x.Packed != nil {
			continue
		}
		a := ax - (len(out) - len(x.Type.Shape))
		if a >= 0 && !isOne(x.Type.Shape[a]) {
			return typeErr("declare the unpacked operand @ packed(indptr="+indptr.Name+") too, or make it broadcast along the tokens (size 1)", "mixing packed and unpacked operands: %s has %s along the packed axis", x.Type, x.Type.Shape[a])
		}
	}
	return nil
}

// packedReshape moves the packed axis of a through a reshape to shape to:
// the axis must survive as it is, with the same element count before it.
func packedReshape(a *Value, to Shape) (*Packed, *TypeError) {
	p := a.Packed
	before := a.Type.Shape[:p.Axis].NumElements()
	for k := range to {
		if to[k].Equal(a.Type.Shape[p.Axis]) && to[:k].NumElements().Equal(before) {
			return &Packed{Axis: k, Indptr: p.Indptr}, nil
		}
	}
	return nil, typeErr("reshape only the axes beside the tokens: [N, H*Dh] to [N, H, Dh]", "reshape of %s to %s merges or splits the packed token axis %d", a.Type.Shape, to, p.Axis)
}

// PackedSeqs is the number of sequences B of a packed axis whose indptr is
// i32[B + 1].
func PackedSeqs(p *Packed) Dim { return p.Indptr.Type.Shape[0].Sub(Const(1)) }

// inferPackedRope types rope of packed tokens x [N, H, Dh] at positions
// pos : i32[N] packed by the same indptr: one position a token.
func inferPackedRope(x, pos *Value) ([]Result, *TypeError) {
	s := x.Type.Shape
	if x.Packed == nil || pos.Packed == nil || x.Packed.Indptr != pos.Packed.Indptr {
		return nil, typeErr("declare the positions @ packed(indptr=...) with the tokens' indptr", "rope of packed tokens needs positions packed the same way")
	}
	if len(s) != 3 || x.Packed.Axis != 0 {
		return nil, typeErr("reshape to [N, heads, head_dim] first", "rope of packed tokens needs x [N, H, Dh] packed on its first axis, got %s", x.Type)
	}
	if pos.Type.DType != I32 || !pos.Type.Shape.Equal(s[:1]) {
		return nil, typeErr("", "rope positions of packed tokens must be i32%s, got %s", s[:1], pos.Type)
	}
	if d, ok := s[2].Value(); ok && d%2 != 0 {
		return nil, typeErr("", "rope needs an even head dim, got %d", d)
	}
	return []Result{{Type: x.Type, Packed: x.Packed}}, nil
}

// SeqIndptrs returns the indptrs of packed tokens through which n finds each
// token's sequence: an append of packed tokens (where each goes in its
// sequence's cache), varlen attention, a matmul pairing tokens with their
// sequences' matrices, a mask over packed queries (a token's key
// position), an op over lengths that vary per token, and a cache before an
// append of packed tokens (its lengths less each sequence's tokens). A
// kernel computing n reads them; ops that treat tokens as rows read none.
func (n *Node) SeqIndptrs() []*Value {
	var out []*Value
	add := func(v *Value) {
		for _, x := range out {
			if x == v {
				return
			}
		}
		out = append(out, v)
	}
	switch a := n.Args; {
	case n.Op == OpAppend && a[1].Packed != nil:
		add(a[1].Packed.Indptr)
	case n.Op == OpAttention && n.Attr.Attn != nil && n.Attr.Attn.Varlen,
		n.Op == OpMatmul && a[0].Packed != nil && len(a[1].Type.Shape) > 2:
		add(a[0].Packed.Indptr)
	case (n.Op == OpCausal || n.Op == OpWindow) && a[0].Packed != nil && a[0].Packed.Axis == len(a[0].Type.Shape)-2:
		add(a[0].Packed.Indptr)
	}
	for _, vs := range [][]*Value{n.Args, n.Outs} {
		for _, v := range vs {
			r := v.Ragged
			if r == nil {
				continue
			}
			if r.Less != nil {
				add(r.Less)
			}
			if p := v.Packed; p != nil && r.Batch == p.Axis {
				add(p.Indptr)
			}
		}
	}
	return out
}
