package ir

import (
	"fmt"
	"strings"
)

// TypeError is a shape or dtype error of one node, with an optional hint.
type TypeError struct {
	Msg, Hint string
}

func (e *TypeError) Error() string { return e.Msg }

func typeErr(hint, format string, args ...any) *TypeError {
	return &TypeError{Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// Result is one inferred output of a node: its type and ragged marker.
type Result struct {
	Type   Type
	Ragged *Ragged
	Packed *Packed
}

// Infer computes the output types of a node from its op, args and attrs. The
// builder uses it to type new nodes and Verify to re-check every node.
func Infer(n *Node) ([]Result, *TypeError) {
	switch n.Op {
	case OpRope, OpMatmul, OpAppend, OpAttention:
		return inferTypes(n) // they pair packed tokens themselves
	}
	res, err := inferTypes(n)
	if err != nil {
		return nil, err
	}
	p, err := packedOf(n, res)
	if err != nil {
		return nil, err
	}
	for i := range res {
		res[i].Packed = p
	}
	return res, nil
}

func inferTypes(n *Node) ([]Result, *TypeError) {
	info := n.Op.Info()
	for _, a := range n.Args {
		if a.Type.DType == I32 && !acceptsI32(n.Op) {
			return nil, typeErr("i32 tensors are positions, ids or page tables; use cast(x, f32) for arithmetic", "%s of an i32 tensor", info.Name)
		}
	}
	switch n.Op {
	case OpInput, OpParam, OpState:
		return nil, typeErr("", "leaf nodes are typed by their declaration")
	case OpConst:
		return one(Type{DType: n.Attr.To}, nil), nil
	case OpSeqLens:
		return inferSeqLens(n)
	case OpCast:
		a := n.Args[0]
		return one(Type{DType: n.Attr.To, Shape: a.Type.Shape}, a.Ragged), nil
	case OpNeg, OpExp, OpLog, OpSqrt, OpRsqrt, OpTanh, OpSilu, OpGelu, OpSigmoid, OpSoftcap:
		a := n.Args[0]
		return one(a.Type, a.Ragged), nil
	case OpAdd, OpSub, OpMul, OpDiv, OpMax, OpMin:
		return inferBinary(n)
	case OpCausal, OpWindow:
		a := n.Args[0]
		if len(a.Type.Shape) < 2 {
			return nil, typeErr("masks apply to scores [..., queries, keys]", "%s needs a tensor of rank ≥ 2, got %s", info.Name, a.Type)
		}
		return one(a.Type, a.Ragged), nil
	case OpRope:
		return inferRope(n)
	case OpReshape:
		return inferReshape(n)
	case OpTranspose:
		return inferTranspose(n)
	case OpSplit:
		return inferSplit(n)
	case OpConcat:
		return inferConcat(n)
	case OpSlice:
		return inferSlice(n)
	case OpGather:
		return inferGather(n)
	case OpSum, OpReduceMax, OpMean:
		a := n.Args[0]
		if err := checkAxis(n.Attr.Axis, a); err != nil {
			return nil, err
		}
		name := info.Name
		if n.Op == OpReduceMax {
			name = "max" // as written in the spec
		}
		if err := checkNotBatch(name, n.Attr.Axis, a); err != nil {
			return nil, err
		}
		shape := append(Shape(nil), a.Type.Shape...)
		shape[n.Attr.Axis] = Const(1)
		r := a.Ragged
		if r != nil && r.Axis == n.Attr.Axis {
			r = nil
		}
		return one(Type{DType: a.Type.DType, Shape: shape}, r), nil
	case OpSoftmax, OpTopK:
		a := n.Args[0]
		if err := checkAxis(n.Attr.Axis, a); err != nil {
			return nil, err
		}
		if err := checkNotBatch(info.Name, n.Attr.Axis, a); err != nil {
			return nil, err
		}
		if n.Op == OpTopK {
			if k, ok := a.Type.Shape[n.Attr.Axis].Value(); ok && (int64(n.Attr.K) > k || n.Attr.K < 1) {
				return nil, typeErr("", "topk keeps %d of %d entries", n.Attr.K, k)
			}
		}
		return one(a.Type, a.Ragged), nil
	case OpMatmul:
		return inferMatmul(n)
	case OpAppend:
		return inferAppend(n)
	case OpAttention:
		return inferAttention(n)
	}
	return nil, typeErr("", "unknown op %d", n.Op)
}

func acceptsI32(o Op) bool {
	switch o {
	case OpSeqLens, OpCast, OpReshape, OpTranspose, OpSplit, OpConcat, OpSlice:
		return true
	case OpRope, OpGather:
		return true // the i32 argument is checked by the op
	}
	return false
}

func one(t Type, r *Ragged) []Result { return []Result{{Type: t, Ragged: r}} }

func checkAxis(axis int, a *Value) *TypeError {
	if axis < 0 || axis >= len(a.Type.Shape) {
		return typeErr("axes count from 0, or from -1 for the last", "axis %d out of range for %s", axis, a.Type)
	}
	return nil
}

// checkNotBatch rejects an op that works across the entries of axis when
// axis is the batch (sequence) axis of a ragged value: each entry has its
// own sequence length, so the positions that exist along the variable-length
// axis differ from one entry to the next, and a split or sliced part would
// no longer line up with the lengths.
func checkNotBatch(op string, axis int, a *Value) *TypeError {
	r := a.Ragged
	if r == nil || r.Batch < 0 || r.Batch != axis {
		return nil
	}
	hint := fmt.Sprintf("reduce over the variable-length axis %d first, or over another axis", r.Axis)
	verb := "reduce over"
	switch op {
	case "split", "slice":
		verb, hint = op, "the parts would not line up with the per-sequence lengths; "+op+" another axis"
	case "softmax", "topk":
		verb = "normalise over"
	}
	return typeErr(hint, "%s: cannot %s axis %d of %s: it is the sequence axis of a variable-length value", op, verb, axis, a.Type)
}

// sameRagged reports whether two ragged markers describe the same valid
// positions: the same axes and the same lengths (one lens value, or two
// seqlens nodes over the same layout inputs) plus the same extra.
func sameRagged(a, b *Ragged) bool {
	return a.Axis == b.Axis && a.Batch == b.Batch && a.Extra.Equal(b.Extra) && sameLens(a.Lens, b.Lens) && a.Less == b.Less
}

func sameLens(a, b *Value) bool {
	if a == b {
		return true
	}
	da, db := a.Def, b.Def
	if da == nil || db == nil || da.Op != OpSeqLens || db.Op != OpSeqLens || da.Attr.Num != db.Attr.Num || len(da.Args) != len(db.Args) {
		return false
	}
	for i := range da.Args {
		if da.Args[i] != db.Args[i] {
			return false
		}
	}
	return true
}

// raggedString describes a marker for error messages, naming the layout
// inputs its lengths come from.
func raggedString(r *Ragged) string {
	lens := r.Lens.Ref()
	if d := r.Lens.Def; d != nil && d.Op == OpSeqLens {
		var names []string
		for _, a := range d.Args {
			names = append(names, a.Ref())
		}
		lens = "seqlens(" + strings.Join(names, ", ") + ")"
	}
	s := fmt.Sprintf("axis %d, lengths %s", r.Axis, lens)
	if !r.Extra.IsZero() {
		s += " + " + r.Extra.String()
	}
	if r.Less != nil {
		s += " - the tokens packed by " + r.Less.Ref()
	}
	return s
}

func sameDType(op string, a, b *Value) *TypeError {
	if a.Type.DType != b.Type.DType {
		return typeErr(fmt.Sprintf("convert one side with cast(x, %s)", a.Type.DType), "dtype mismatch in %s: %s and %s", op, a.Type.DType, b.Type.DType)
	}
	return nil
}

// broadcast returns the NumPy-style broadcast of two shapes.
func broadcast(a, b Shape) (Shape, bool) {
	n := max(len(a), len(b))
	out := make(Shape, n)
	for i := range n {
		da, db := Const(1), Const(1)
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da.Equal(db):
			out[i] = da
		case isOne(da):
			out[i] = db
		case isOne(db):
			out[i] = da
		default:
			return nil, false
		}
	}
	return out, true
}

func isOne(d Dim) bool {
	v, ok := d.Value()
	return ok && v == 1
}

// alignRagged moves a ragged marker of an operand of rank from to a Result
// of rank to (right-aligned axes).
func alignRagged(r *Ragged, from, to int) *Ragged {
	if r == nil {
		return nil
	}
	c := *r
	c.Axis += to - from
	if c.Batch >= 0 {
		c.Batch += to - from
	}
	return &c
}

func inferBinary(n *Node) ([]Result, *TypeError) {
	a, b := n.Args[0], n.Args[1]
	if err := sameDType(n.Op.String(), a, b); err != nil {
		return nil, err
	}
	shape, ok := broadcast(a.Type.Shape, b.Type.Shape)
	if !ok {
		return nil, typeErr("axes must be equal or 1, aligned from the right", "cannot broadcast %s with %s in %s", a.Type.Shape, b.Type.Shape, n.Op)
	}
	r := alignRagged(a.Ragged, len(a.Type.Shape), len(shape))
	if rb := alignRagged(b.Ragged, len(b.Type.Shape), len(shape)); rb != nil {
		if r != nil && !sameRagged(r, rb) {
			return nil, typeErr("both operands have per-sequence lengths, and they differ; combine values of one cache", "%s of two variable-length values with different lengths (%s vs %s)", n.Op, raggedString(r), raggedString(rb))
		}
		if r == nil {
			r = rb
		}
	}
	return one(Type{DType: a.Type.DType, Shape: shape}, r), nil
}

func inferSeqLens(n *Node) ([]Result, *TypeError) {
	indptr := n.Args[0]
	if indptr.Type.DType != I32 || len(indptr.Type.Shape) != 1 {
		return nil, typeErr("", "indptr must be i32[B + 1], got %s", indptr.Type)
	}
	b := indptr.Type.Shape[0].Sub(Const(1))
	if len(n.Args) == 2 {
		last := n.Args[1]
		if last.Type.DType != I32 || !last.Type.Shape.Equal(Shape{b}) {
			return nil, typeErr("", "last-page lengths must be i32[%s], got %s", b, last.Type)
		}
	}
	return one(Type{DType: I32, Shape: Shape{b}}, nil), nil
}

func inferRope(n *Node) ([]Result, *TypeError) {
	x, pos := n.Args[0], n.Args[1]
	if x.Packed != nil || pos.Packed != nil {
		return inferPackedRope(x, pos)
	}
	s := x.Type.Shape
	if len(s) != 4 {
		return nil, typeErr("reshape to [B, S, heads, head_dim] first", "rope needs x of rank 4 [B, S, H, Dh], got %s", x.Type)
	}
	if pos.Type.DType != I32 || !pos.Type.Shape.Equal(s[:2]) {
		return nil, typeErr("", "rope positions must be i32%s, got %s", s[:2], pos.Type)
	}
	if d, ok := s[3].Value(); ok && d%2 != 0 {
		return nil, typeErr("", "rope needs an even head dim, got %d", d)
	}
	return one(x.Type, x.Ragged), nil
}

func inferReshape(n *Node) ([]Result, *TypeError) {
	a := n.Args[0]
	to := Shape(n.Attr.Sizes)
	if !a.Type.Shape.NumElements().Equal(to.NumElements()) {
		return nil, typeErr("the element counts must match for every binding of the dims", "cannot reshape %s (%s elements) to %s (%s elements)", a.Type.Shape, a.Type.Shape.NumElements(), to, to.NumElements())
	}
	r := a.Ragged
	if r != nil {
		// Every axis up to the variable-length one and its sequence axis
		// must stay as it is.
		keep := max(r.Axis, r.Batch)
		if len(to) <= keep || !to[:keep+1].Equal(a.Type.Shape[:keep+1]) {
			if r.Batch > r.Axis {
				return nil, typeErr("reshape only the axes after both", "reshape would change the variable-length axis %d or the sequence axis %d of %s", r.Axis, r.Batch, a.Type.Shape)
			}
			return nil, typeErr("reshape only the axes after it", "reshape would merge the variable-length axis %d of %s", r.Axis, a.Type.Shape)
		}
	}
	return one(Type{DType: a.Type.DType, Shape: to}, r), nil
}

func inferTranspose(n *Node) ([]Result, *TypeError) {
	a := n.Args[0]
	p := n.Attr.Perm
	if len(p) != len(a.Type.Shape) {
		return nil, typeErr("", "transpose permutation %v has %d axes, the tensor %d", p, len(p), len(a.Type.Shape))
	}
	seen := make([]bool, len(p))
	shape := make(Shape, len(p))
	for i, ax := range p {
		if ax < 0 || ax >= len(p) || seen[ax] {
			return nil, typeErr("list every axis once", "transpose permutation %v is not a permutation", p)
		}
		seen[ax] = true
		shape[i] = a.Type.Shape[ax]
	}
	var r *Ragged
	if a.Ragged != nil {
		c := *a.Ragged
		for i, ax := range p {
			if ax == a.Ragged.Axis {
				c.Axis = i
			}
			if ax == a.Ragged.Batch {
				c.Batch = i
			}
		}
		r = &c
	}
	return one(Type{DType: a.Type.DType, Shape: shape}, r), nil
}

func inferSplit(n *Node) ([]Result, *TypeError) {
	a := n.Args[0]
	ax := n.Attr.Axis
	if err := checkAxis(ax, a); err != nil {
		return nil, err
	}
	if a.Ragged != nil && a.Ragged.Axis == ax {
		return nil, typeErr("", "cannot split the variable-length axis %d", ax)
	}
	if err := checkNotBatch("split", ax, a); err != nil {
		return nil, err
	}
	total := Dim{}
	var out []Result
	for _, sz := range n.Attr.Sizes {
		total = total.Add(sz)
		shape := append(Shape(nil), a.Type.Shape...)
		shape[ax] = sz
		out = append(out, Result{Type: Type{DType: a.Type.DType, Shape: shape}, Ragged: a.Ragged})
	}
	if !total.Equal(a.Type.Shape[ax]) {
		return nil, typeErr("the sizes must add up to the axis", "split sizes add up to %s, axis %d of %s is %s", total, ax, a.Type, a.Type.Shape[ax])
	}
	return out, nil
}

func inferConcat(n *Node) ([]Result, *TypeError) {
	ax := n.Attr.Axis
	first := n.Args[0]
	if err := checkAxis(ax, first); err != nil {
		return nil, err
	}
	shape := append(Shape(nil), first.Type.Shape...)
	total := Dim{}
	var r *Ragged
	for i, a := range n.Args {
		if err := sameDType("concat", first, a); err != nil {
			return nil, err
		}
		if len(a.Type.Shape) != len(shape) {
			return nil, typeErr("", "concat of rank %d and rank %d tensors", len(shape), len(a.Type.Shape))
		}
		for d := range shape {
			if d == ax {
				continue
			}
			b, ok := broadcast(Shape{shape[d]}, Shape{a.Type.Shape[d]})
			if !ok {
				return nil, typeErr("axes other than the concat axis must be equal or 1", "concat: axis %d is %s in one part and %s in another", d, shape[d], a.Type.Shape[d])
			}
			shape[d] = b[0]
		}
		if a.Ragged != nil {
			if a.Ragged.Axis != ax || i != len(n.Args)-1 {
				return nil, typeErr("put the per-request part last", "concat: a variable-length part must be the last along its variable axis")
			}
			c := *a.Ragged
			c.Extra = c.Extra.Add(total)
			r = &c
		}
		total = total.Add(a.Type.Shape[ax])
	}
	shape[ax] = total
	return one(Type{DType: first.Type.DType, Shape: shape}, r), nil
}

func inferSlice(n *Node) ([]Result, *TypeError) {
	a := n.Args[0]
	ax := n.Attr.Axis
	if err := checkAxis(ax, a); err != nil {
		return nil, err
	}
	if a.Ragged != nil && a.Ragged.Axis == ax {
		return nil, typeErr("", "cannot slice the variable-length axis %d", ax)
	}
	if err := checkNotBatch("slice", ax, a); err != nil {
		return nil, err
	}
	size := n.Attr.End.Sub(n.Attr.Start)
	if v, ok := size.Value(); ok && v <= 0 {
		return nil, typeErr("", "slice [%s, %s) is empty", n.Attr.Start, n.Attr.End)
	}
	if v, ok := a.Type.Shape[ax].Sub(n.Attr.End).Value(); ok && v < 0 {
		return nil, typeErr("", "slice end %s is past the axis size %s", n.Attr.End, a.Type.Shape[ax])
	}
	shape := append(Shape(nil), a.Type.Shape...)
	shape[ax] = size
	return one(Type{DType: a.Type.DType, Shape: shape}, a.Ragged), nil
}

func inferGather(n *Node) ([]Result, *TypeError) {
	table, ids := n.Args[0], n.Args[1]
	if len(table.Type.Shape) != 2 || table.Type.DType == I32 {
		return nil, typeErr("", "gather needs a table [V, D], got %s", table.Type)
	}
	if ids.Type.DType != I32 {
		return nil, typeErr("", "gather needs i32 ids, got %s", ids.Type)
	}
	shape := append(append(Shape(nil), ids.Type.Shape...), table.Type.Shape[1])
	return one(Type{DType: table.Type.DType, Shape: shape}, nil), nil
}

func inferMatmul(n *Node) ([]Result, *TypeError) {
	a, b := n.Args[0], n.Args[1]
	if a.Packed != nil || b.Packed != nil {
		return inferPackedMatmul(n)
	}
	if err := sameDType("matmul", a, b); err != nil {
		return nil, err
	}
	sa, sb := a.Type.Shape, b.Type.Shape
	if len(sa) < 2 || len(sb) < 2 {
		return nil, typeErr("matmul needs [..., M, K] @ [..., K, N]", "matmul of %s and %s: both operands need rank ≥ 2", a.Type, b.Type)
	}
	ka, kb := sa[len(sa)-1], sb[len(sb)-2]
	if !ka.Equal(kb) {
		return nil, typeErr("the last axis of the left operand must equal the second-to-last of the right", "matmul inner dims differ: %s @ %s (%s vs %s)", sa, sb, ka, kb)
	}
	var batch Shape
	if len(sb) == 2 {
		batch = sa[:len(sa)-2]
	} else {
		var err *TypeError
		if batch, err = matmulBatch(sa[:len(sa)-2], sb[:len(sb)-2]); err != nil {
			return nil, err
		}
	}
	shape := append(append(Shape(nil), batch...), sa[len(sa)-2], sb[len(sb)-1])
	// A variable-length axis that is contracted disappears (the contraction
	// skips the positions that do not exist); any other one is carried over
	// to the result, right-aligned like the batch axes.
	var r *Ragged
	for i, x := range []*Value{a, b} {
		rg, rank := x.Ragged, len(x.Type.Shape)
		contracted := rank - 1 // a's K axis
		if i == 1 {
			contracted = rank - 2 // b's K axis
		}
		if rg == nil || rg.Axis == contracted {
			continue
		}
		if rg.Batch == contracted {
			return nil, typeErr("the contracted axis indexes the sequences, whose lengths differ", "matmul contracts axis %d of %s, the sequence axis of its variable-length axis %d", contracted, x.Type, rg.Axis)
		}
		c := alignRagged(rg, rank, len(shape))
		if r != nil && r.Axis != c.Axis {
			return nil, typeErr("a value has at most one variable-length axis; reduce one operand's first", "matmul result would have two variable-length axes, %d and %d", r.Axis, c.Axis)
		}
		if r != nil && !sameRagged(r, c) {
			return nil, typeErr("both operands have per-sequence lengths, and they differ", "matmul of two variable-length values with different lengths (%s vs %s)", raggedString(r), raggedString(c))
		}
		r = c
	}
	return one(Type{DType: a.Type.DType, Shape: shape}, r), nil
}

// matmulBatch broadcasts the batch axes of a matmul. An axis of the left
// operand may be a multiple of the right's (GQA head groups).
func matmulBatch(a, b Shape) (Shape, *TypeError) {
	n := max(len(a), len(b))
	out := make(Shape, n)
	for i := range n {
		da, db := Const(1), Const(1)
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		if s, ok := broadcast(Shape{da}, Shape{db}); ok {
			out[i] = s[0]
			continue
		}
		x, okx := da.Value()
		y, oky := db.Value()
		if !okx || !oky || x%y != 0 {
			return nil, typeErr("a head axis H may group over G kv heads only when G divides H", "matmul batch axes %s and %s do not broadcast", da, db)
		}
		out[i] = da
	}
	return out, nil
}

// GroupSize returns how many left-operand entries share one right-operand
// entry along a matmul batch axis (1 unless the axis is a GQA head group).
func GroupSize(a, b Dim) int64 {
	x, okx := a.Value()
	y, oky := b.Value()
	if !okx || !oky || y == 0 || x == y || y == 1 {
		return 1
	}
	return x / y
}

func inferAppend(n *Node) ([]Result, *TypeError) {
	kv, k, v := n.Args[0], n.Args[1], n.Args[2]
	if kv.Def == nil || kv.Def.Op != OpState {
		return nil, typeErr("declare the cache with `state`", "append needs a state tensor, got %s", kv.Type)
	}
	s := kv.Type.Shape
	if len(s) != 5 || !isTwo(s[0]) {
		return nil, typeErr("a KV cache is declared [2, B, G, T, Dh]", "append needs a cache of shape [2, B, G, T, Dh], got %s", kv.Type.Shape)
	}
	if k.Packed != nil || v.Packed != nil {
		return inferPackedAppend(kv, k, v)
	}
	for _, x := range []*Value{k, v} {
		if err := sameDType("append", kv, x); err != nil {
			return nil, err
		}
		xs := x.Type.Shape
		if len(xs) != 4 || !xs[0].Equal(s[1]) || !xs[1].Equal(s[2]) || !xs[3].Equal(s[4]) {
			return nil, typeErr("transpose the new keys and values to [B, G, S, Dh]", "append needs k and v of shape [%s, %s, S, %s], got %s", s[1], s[2], s[4], xs)
		}
		if !xs.Equal(k.Type.Shape) {
			return nil, typeErr("", "append: k is %s but v is %s", k.Type.Shape, xs)
		}
	}
	shape := Shape{s[1], s[2], s[3].Add(k.Type.Shape[2]), s[4]}
	// A paged or ragged cache's lengths describe it after the append
	// (LANGUAGE.md, KV-cache layouts): the appended state holds len_b - S
	// cached tokens (its marker's Extra is -S, set by the builder), and the
	// whole cache returned holds len_b.
	var r *Ragged
	if kv.Ragged != nil {
		r = &Ragged{Axis: 2, Batch: 0, Lens: kv.Ragged.Lens, Extra: kv.Ragged.Extra.Add(k.Type.Shape[2])}
	}
	t := Type{DType: kv.Type.DType, Shape: shape}
	return []Result{{Type: t, Ragged: r}, {Type: t, Ragged: r}}, nil
}

func isTwo(d Dim) bool {
	v, ok := d.Value()
	return ok && v == 2
}

func inferAttention(n *Node) ([]Result, *TypeError) {
	want := 3
	cascade := n.Attr.Attn != nil && n.Attr.Attn.Cascade
	if cascade {
		want = 5
	}
	if n.Attr.Attn != nil && n.Attr.Attn.Bias {
		want++
	}
	if n.Attr.Attn == nil || len(n.Args) != want {
		return nil, typeErr("", "attention needs %d arguments and a variant", want)
	}
	q := n.Args[0]
	if q.Packed != nil || n.Attr.Attn.Varlen {
		return inferVarlenAttention(n)
	}
	qs := q.Type.Shape
	if len(qs) != 4 {
		return nil, typeErr("", "attention query must be [B, H, S, Dh], got %s", q.Type)
	}
	if cascade && n.Attr.Attn.KeysT {
		return nil, typeErr("", "cascade attention takes no keys stored transposed")
	}
	kvs := n.AttentionKV()
	for i, kv := range kvs {
		ks := kv.Type.Shape
		if i%2 == 0 {
			ks = n.KeyRows(kv)
		}
		if len(ks) != 4 || !ks[3].Equal(qs[3]) || kv.Type.DType != q.Type.DType {
			if i%2 == 0 && n.Attr.Attn.KeysT {
				return nil, typeErr("", "attention keys stored transposed must be [B, G, %s, T] %s, got %s", qs[3], q.Type.DType, kv.Type)
			}
			return nil, typeErr("", "attention keys/values must be [B, G, T, %s] %s, got %s", qs[3], q.Type.DType, kv.Type)
		}
	}
	var keys Dim
	for i := 0; i < len(kvs); i += 2 {
		k, v := kvs[i], kvs[i+1]
		prefix := cascade && i == 0
		ks := n.KeyRows(k)
		if !ks.Equal(v.Type.Shape) {
			return nil, typeErr("", "attention keys %s and values %s differ in shape", ks, v.Type.Shape)
		}
		if !headsDivide(qs[1], ks[1]) {
			return nil, typeErr("each kv head serves H/G query heads", "attention: %s kv heads do not divide %s query heads", ks[1], qs[1])
		}
		switch {
		case prefix:
			// The shared prefix [1, G, L, Dh]: one sequence, the heads of
			// the per-request keys.
			if !isOne(ks[0]) || !ks[1].Equal(n.Args[3].Type.Shape[1]) {
				return nil, typeErr("", "cascade attention prefix must be [1, %s, L, %s], got %s", n.Args[3].Type.Shape[1], qs[3], ks)
			}
		case !ks[0].Equal(qs[0]) && !isOne(ks[0]):
			return nil, typeErr("", "attention keys %s have batch %s, the queries %s", ks, ks[0], qs[0])
		}
		if i == 0 {
			keys = ks[2]
		} else {
			keys = keys.Add(ks[2])
		}
	}
	if b := n.AttentionBias(); b != nil {
		if err := checkAttentionBias(b, qs, keys); err != nil {
			return nil, err
		}
	}
	return one(q.Type, nil), nil
}

// headsDivide reports whether g kv heads divide h query heads.
func headsDivide(h, g Dim) bool {
	if h.Equal(g) {
		return true
	}
	x, okx := h.Value()
	y, oky := g.Value()
	return okx && oky && y > 0 && x%y == 0
}
