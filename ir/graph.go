package ir

import "github.com/fuser-dev/fuser/diag"

// Graph is a layer in SSA form: nodes in a topological order, each defining
// one or more values.
type Graph struct {
	Name string
	// Dims are the symbolic dims, in declaration order.
	Dims []string
	// Consts are the named constants with their folded values.
	Consts map[string]float64
	Nodes  []*Node
	// Inputs, Params and States are the leaf values, in declaration order.
	Inputs, Params, States []*Value
	// Outputs are the declared outputs, in declaration order.
	Outputs []*Value
	nextID  int
}

// Value is a tensor: the result of one node.
type Value struct {
	ID   int
	Name string // the spec name the value was bound to, if any
	Type Type
	Def  *Node
	// Ragged is set when one axis has a per-sequence length (paged or ragged
	// KV caches): positions past a sequence's length do not exist.
	Ragged *Ragged
	// Packed is set when one axis holds the tokens of several sequences
	// back to back (packed variable-length queries).
	Packed *Packed
}

// Type is a tensor type.
type Type struct {
	DType DType
	Shape Shape
}

// String prints the type as bf16[B, S, 4096].
func (t Type) String() string { return t.DType.String() + t.Shape.String() }

// Bytes is the byte count of a tensor of type t as a polynomial over the
// dims, or ErrOverflow when one of its coefficients leaves int64.
func (t Type) Bytes() (Dim, error) {
	n := Const(t.DType.Size())
	for _, d := range t.Shape {
		var err error
		if n, err = n.MulChecked(d); err != nil {
			return Dim{}, err
		}
	}
	return n, nil
}

// Ragged marks an axis whose valid length differs per sequence: along Axis,
// position j of sequence b (the index on axis Batch, or sequence 0 when Batch
// is -1) exists iff j < Lens[b] + Extra, where Lens is an i32[B] value.
// When Batch is the value's packed axis, b is the sequence of the token at
// that index. Less, when set, is the indptr of packed tokens appended in
// the step: sequence b then has Less[b+1] - Less[b] positions fewer (a
// cache before the append of packed tokens).
type Ragged struct {
	Axis, Batch int
	Lens        *Value
	Extra       Dim
	Less        *Value
}

// Layout is the storage of a state tensor.
type Layout struct {
	Kind LayoutKind
	// Page is the page size of a paged layout; Pages the number of pages in
	// the pool (a dim).
	Page  int64
	Pages Dim
	// Indptr, Indices and Last are the i32 inputs that describe a paged or
	// ragged layout (Indices and Last only for paged).
	Indptr, Indices, Last *Value
}

// LayoutKind says how a state is stored.
type LayoutKind int

// The KV-cache layouts.
const (
	Contiguous LayoutKind = iota
	Paged
	RaggedLayout
)

var layoutNames = [...]string{"contiguous", "paged", "ragged"}

// String names the layout.
func (k LayoutKind) String() string { return layoutNames[k] }

// Node is one operation.
type Node struct {
	ID   int
	Op   Op
	Args []*Value
	Outs []*Value
	Pos  diag.Pos
	Attr Attr
}

// Attr holds the op parameters; each op reads only the fields it needs.
type Attr struct {
	Axis  int     // reductions, softmax, topk, split, concat, slice: a non-negative axis
	Perm  []int   // transpose
	Sizes []Dim   // split: the part sizes; reshape: the new shape
	Start Dim     // slice
	End   Dim     // slice
	Num   float64 // const: the value; softcap: c; rope: theta; seqlens: a paged layout's page size
	K     int     // topk
	W     Dim     // window: keys kept before and including the query
	To    DType   // cast, const: the result dtype
	// Layout is the storage of a state leaf.
	Layout *Layout
	// Attn describes an attention node's variant.
	Attn *Attention
}

// Attention is the variant of a fused attention node. Its arguments are
// q [B, H, S, Dh], then K, V [B, G, T, Dh]; a cascade node has the shared
// prefix first: q, Kp, Vp [1, G, L, Dh], K, V. A node with a Bias has one
// more argument, last: the bias, broadcastable (aligned from the right) to
// the scores [B, H, S, N] of the N keys, full along the keys, of any float
// dtype. Its head axis counts query heads: under GQA each of the H/G
// heads of a kv head has its own bias row. Scores are
// softcap((q · k) * Scale + BiasScale * bias) with the mask applied, as
// written in the spec (without a bias, softcap((q · k) * Scale)).
type Attention struct {
	Scale float64
	// Bias says that the node's last argument is a score bias, added
	// after the scale and before softcap and the mask, times BiasScale
	// (the scales written outside the addition, and -1 for a subtraction).
	Bias      bool
	BiasScale float64
	// Softcap is the cap c of c*tanh(s/c), 0 for none.
	Softcap float64
	// Causal masks keys after the query; Window, when not zero, also masks
	// keys Window or more positions before it.
	Causal bool
	Window Dim
	// Cascade is set when the keys are a shared prefix followed by each
	// sequence's own keys.
	Cascade bool
	// KeysT says the keys are stored transposed: the K argument is
	// [B, G, Dh, T], a key a column (q @ kt with kt a state, an input or a
	// view stored that way), read in that layout; V stays [B, G, T, Dh].
	// The attention pass sets it only over dense keys: not with a cascade,
	// nor over keys an append writes or a paged or ragged cache holds.
	KeysT bool
	// Varlen says the queries are packed tokens of several sequences
	// (ir.Packed): the query argument is [H, N, Dh] packed on its token
	// axis, K and V are [B, G, T, Dh] of the B sequences of its indptr, and
	// token n of sequence b attends to sequence b's keys only, at key
	// position len_b - qlen_b + (n - indptr[b]) (len_b its keys, qlen_b its
	// tokens); the result is [H, N, Dh], packed alike. No cascade, bias or
	// keys stored transposed with it.
	Varlen bool
}

// NewValue adds a value of type t defined by n, with the next ID.
func (g *Graph) NewValue(n *Node, t Type) *Value {
	g.nextID++
	v := &Value{ID: g.nextID, Type: t, Def: n}
	n.Outs = append(n.Outs, v)
	return v
}

// Users returns, for every value, the nodes that read it, in graph order:
// as an argument, or as a layout input of a state leaf.
func (g *Graph) Users() map[*Value][]*Node {
	users := map[*Value][]*Node{}
	for _, n := range g.Nodes {
		for _, a := range n.Args {
			users[a] = append(users[a], n)
		}
		if n.Attr.Layout != nil {
			for _, a := range []*Value{n.Attr.Layout.Indptr, n.Attr.Layout.Indices, n.Attr.Layout.Last} {
				if a != nil {
					users[a] = append(users[a], n)
				}
			}
		}
	}
	return users
}

// AppendOf is the append writing state v, or nil.
func (g *Graph) AppendOf(v *Value) *Node {
	for _, n := range g.Nodes {
		if n.Op == OpAppend && n.Args[0] == v {
			return n
		}
	}
	return nil
}

// StorageShape is the shape of the buffer holding leaf or output v. A state
// is sized for what the step leaves in it: a contiguous or ragged cache that
// an append writes holds its T cached tokens plus the S new ones ([2, B, G,
// T+S, Dh], each row's cached tokens first), a paged cache is its pool of
// pages ([Pages, 2, G, page, Dh]); any other value is stored as its shape.
func (g *Graph) StorageShape(v *Value) Shape {
	sh := v.Type.Shape
	if v.Def == nil || v.Def.Op != OpState || len(sh) != 5 {
		return sh
	}
	if l := v.Def.Attr.Layout; l != nil && l.Kind == Paged {
		return Shape{l.Pages, Const(2), sh[2], Const(l.Page), sh[4]}
	}
	if app := g.AppendOf(v); app != nil && len(app.Outs) == 2 {
		if k := app.Outs[0].Type.Shape; len(k) == 4 {
			return Shape{Const(2), k[0], k[1], k[2], k[3]}
		}
	}
	return sh
}
