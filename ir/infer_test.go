package ir_test

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
)

// raggedSpec has a cache kv1 over a ragged layout, appended to; {{decls}}
// declares more, and {{body}} binds the output y of type {{y}}. The output
// z uses V1 and w.
const raggedSpec = `
layer r
dim B, S, T
const G = 2, Dh = 8
input  k       : f32[B, G, S, Dh]
input  indptr1 : i32[B + 1]
param  w       : f32[Dh, 4]
state  kv1     : f32[2, B, G, T, Dh] @ ragged(indptr=indptr1)
{{decls}}
output y       : {{y}}
output z       : f32[1, G, 1, Dh]
K1, V1 = append(kv1, k, k)
z = sum(sum(V1, axis=2), axis=0) + 0 * transpose(sum(w, axis=1))
{{body}}
`

// A second cache with its own indptr, and a third sharing kv1's.
const (
	kv2 = "input indptr2 : i32[B + 1]\nstate kv2 : f32[2, B, G, T, Dh] @ ragged(indptr=indptr2)"
	kv3 = "state kv3 : f32[2, B, G, T, Dh] @ ragged(indptr=indptr1)"
)

// buildRagged builds raggedSpec and verifies the graph; it returns the
// graph or the error text.
func buildRagged(t *testing.T, decls, y, body string) (*ir.Graph, string) {
	t.Helper()
	src := strings.NewReplacer("{{decls}}", decls, "{{y}}", y, "{{body}}", body).Replace(raggedSpec)
	g, err := frontend.Parse("r.fu", src)
	if err != nil {
		return nil, err.Error()
	}
	if err := g.Verify(); err != nil {
		t.Fatalf("verify: %v", err)
	}
	return g, ""
}

// named returns the value bound to name.
func named(t *testing.T, g *ir.Graph, name string) *ir.Value {
	t.Helper()
	for _, n := range g.Nodes {
		for _, o := range n.Outs {
			if o.Name == name {
				return o
			}
		}
	}
	t.Fatalf("no value %s", name)
	return nil
}

// TestRaggedMarkers checks how the ragged marker travels through the ops
// and which uses of a variable-length value are rejected.
func TestRaggedMarkers(t *testing.T) {
	tests := []struct {
		name, decls, y, body string
		// the marker of y: axis and batch, or axis -1 for none
		axis, batch int
		// want is a fragment of the error, "" for none
		want string
	}{
		// The layout's lengths count the appended tokens: no extra S.
		{"append", "", "f32[B, G, T + S, Dh]", "y = K1", 2, 0, ""},
		// matmul: the left operand's variable-length axis, not contracted,
		// is carried over (it was dropped, and a mean over it divided by
		// T + S).
		{"matmul keeps left marker", "", "f32[B, G, T + S, 4]", "y = K1 @ w", 2, 0, ""},
		{"matmul left marker, then mean", "", "f32[B, G, 1, 4]", "P = K1 @ w\ny = mean(P, axis=2)", -1, -1, ""},
		{"matmul keeps right marker", "", "f32[B, G, S, T + S]", "y = k @ transpose(K1)", 3, 0, ""},
		{"matmul contracts ragged axis", "", "f32[B, G, T + S, T + S]", "y = K1 @ transpose(K1)", -1, -1, "two variable-length axes"},
		{"matmul contracts batch axis", "param wb : f32[B, 4]", "f32[G, T + S, Dh, 4]", "y = transpose(K1, [1, 2, 3, 0]) @ wb", -1, -1, "sequence axis of its variable-length axis"},
		{"matmul of two caches", kv2, "f32[B, G, T + S, T + S]", "K2, V2 = append(kv2, k, k)\ny = (K1 @ w) @ transpose(K2 @ w) + 0 * V2", -1, -1, "two variable-length axes"},
		// Rejected: splitting, slicing, reducing or normalising over the
		// sequence axis.
		{"split batch", "", "f32[1, G, T + S, Dh]", "a, b = split(K1, [1, B - 1], axis=0)\ny = a", -1, -1, "split: cannot split axis 0"},
		{"slice batch", "", "f32[1, G, T + S, Dh]", "y = slice(K1, 0, 1, axis=0)", -1, -1, "slice: cannot slice axis 0"},
		{"sum batch", "", "f32[1, G, T + S, Dh]", "y = sum(K1, axis=0)", -1, -1, "sum: cannot reduce over axis 0"},
		{"max batch", "", "f32[1, G, T + S, Dh]", "y = max(K1, axis=0)", -1, -1, "max: cannot reduce over axis 0"},
		{"softmax batch", "", "f32[B, G, T + S, Dh]", "y = softmax(K1, axis=0)", -1, -1, "softmax: cannot normalise over axis 0"},
		// Allowed: the same ops on other axes.
		{"split heads", "", "f32[B, 1, T + S, Dh]", "a, b = split(K1, [1, 1], axis=1)\ny = a + b", 2, 0, ""},
		{"slice head dim", "", "f32[B, G, T + S, 2]", "y = slice(K1, 0, 2, axis=3)", 2, 0, ""},
		{"sum over tokens then batch", "", "f32[1, G, 1, Dh]", "y = sum(sum(K1, axis=2), axis=0)", -1, -1, ""},
		// reshape: the axes up to the variable-length one and its sequence
		// axis stay.
		{"reshape merges batch after axis", "", "f32[G, T + S, B*Dh]", "y = reshape(transpose(K1, [1, 2, 0, 3]), [G, T + S, B*Dh])", -1, -1, "sequence axis 2"},
		{"reshape merges axis", "", "f32[B, G*(T + S), Dh]", "y = reshape(K1, [B, G*(T + S), Dh])", -1, -1, "merge the variable-length axis 2"},
		{"reshape after both", "", "f32[G, T + S, B, 2, 4]", "y = reshape(transpose(K1, [1, 2, 0, 3]), [G, T + S, B, 2, 4])", 1, 2, ""},
		// Binary operands: one marker, or equal ones.
		{"binary different caches", kv2, "f32[B, G, T + S, Dh]", "K2, V2 = append(kv2, k, k)\ny = K1 + K2 + 0 * V2", -1, -1, "different lengths"},
		{"binary shared indptr", kv3, "f32[B, G, T + S, Dh]", "K3, V3 = append(kv3, k, k)\ny = K1 + K3 + V3", 2, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, msg := buildRagged(t, tc.decls, tc.y, tc.body)
			if tc.want != "" {
				if !strings.Contains(msg, tc.want) {
					t.Fatalf("error %q does not mention %q", msg, tc.want)
				}
				return
			}
			if msg != "" {
				t.Fatalf("build: %s", msg)
			}
			y := named(t, g, "y")
			r := y.Ragged
			switch {
			case tc.axis < 0 && r != nil:
				t.Fatalf("y is ragged (axis %d): %s", r.Axis, y.Def)
			case tc.axis >= 0 && r == nil:
				t.Fatalf("y lost its ragged marker: %s", y.Def)
			case tc.axis >= 0 && (r.Axis != tc.axis || r.Batch != tc.batch || !r.Extra.IsZero()):
				t.Fatalf("y is ragged along axis %d, batch %d, extra %s; want %d, %d, 0", r.Axis, r.Batch, r.Extra, tc.axis, tc.batch)
			case tc.axis >= 0 && r.Lens != named(t, g, "kv1").Ragged.Lens:
				t.Fatalf("y has lengths %s, want kv1's", r.Lens.Ref())
			}
		})
	}
}

// leaf returns a new leaf value of the given op and type.
func leaf(op ir.Op, dt ir.DType, shape ...ir.Dim) *ir.Value {
	n := &ir.Node{Op: op}
	v := &ir.Value{Type: ir.Type{DType: dt, Shape: shape}, Def: n}
	n.Outs = []*ir.Value{v}
	return v
}

// TestBinaryRaggedAxes checks that element-wise operands whose markers
// differ only in their axes are rejected, and equal ones accepted.
func TestBinaryRaggedAxes(t *testing.T) {
	B, N := ir.Sym("B"), ir.Sym("N")
	lens := leaf(ir.OpInput, ir.I32, B)
	a := leaf(ir.OpInput, ir.F32, B, N, N)
	b := leaf(ir.OpInput, ir.F32, B, N, N)
	a.Ragged = &ir.Ragged{Axis: 1, Batch: 0, Lens: lens}
	for _, c := range []struct {
		r    ir.Ragged
		want string
	}{
		{ir.Ragged{Axis: 1, Batch: 0, Lens: lens}, ""},
		{ir.Ragged{Axis: 2, Batch: 0, Lens: lens}, "different lengths"},
		{ir.Ragged{Axis: 1, Batch: -1, Lens: lens}, "different lengths"},
		{ir.Ragged{Axis: 1, Batch: 0, Lens: lens, Extra: ir.Const(3)}, "different lengths"},
		{ir.Ragged{Axis: 1, Batch: 0, Lens: leaf(ir.OpInput, ir.I32, B)}, "different lengths"},
	} {
		b.Ragged = &c.r
		res, err := ir.Infer(&ir.Node{Op: ir.OpMul, Args: []*ir.Value{a, b}})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.r, err)
		case c.want == "" && (res[0].Ragged == nil || res[0].Ragged.Axis != 1):
			t.Errorf("%+v: result marker %+v", c.r, res[0].Ragged)
		case c.want != "" && (err == nil || !strings.Contains(err.Msg, c.want)):
			t.Errorf("%+v: error %v, want %q", c.r, err, c.want)
		}
	}
}

// TestInferAttention checks the attention node's argument checks: kv heads
// dividing query heads, K and V of one shape, and a cascade prefix
// [1, G, L, Dh].
func TestInferAttention(t *testing.T) {
	B, S, T, L := ir.Sym("B"), ir.Sym("S"), ir.Sym("T"), ir.Sym("L")
	c := ir.Const
	q := leaf(ir.OpInput, ir.F32, B, c(6), S, c(8))
	kv := func(shape ...ir.Dim) *ir.Value { return leaf(ir.OpInput, ir.F32, shape...) }
	tests := []struct {
		name    string
		cascade bool
		args    []*ir.Value
		want    string
	}{
		{"gqa", false, []*ir.Value{kv(B, c(2), T, c(8)), kv(B, c(2), T, c(8))}, ""},
		{"mha", false, []*ir.Value{kv(B, c(6), T, c(8)), kv(B, c(6), T, c(8))}, ""},
		{"shared batch", false, []*ir.Value{kv(c(1), c(3), T, c(8)), kv(c(1), c(3), T, c(8))}, ""},
		{"heads not dividing", false, []*ir.Value{kv(B, c(4), T, c(8)), kv(B, c(4), T, c(8))}, "4 kv heads do not divide 6 query heads"},
		{"more kv heads", false, []*ir.Value{kv(B, c(12), T, c(8)), kv(B, c(12), T, c(8))}, "do not divide"},
		{"symbolic heads", false, []*ir.Value{kv(B, ir.Sym("G"), T, c(8)), kv(B, ir.Sym("G"), T, c(8))}, "do not divide"},
		{"K and V lengths differ", false, []*ir.Value{kv(B, c(2), T, c(8)), kv(B, c(2), T.Add(c(1)), c(8))}, "differ in shape"},
		{"K and V heads differ", false, []*ir.Value{kv(B, c(2), T, c(8)), kv(B, c(3), T, c(8))}, "differ in shape"},
		{"head dim", false, []*ir.Value{kv(B, c(2), T, c(4)), kv(B, c(2), T, c(4))}, "must be [B, G, T, 8]"},
		{"batch", false, []*ir.Value{kv(c(2), c(2), T, c(8)), kv(c(2), c(2), T, c(8))}, "have batch 2"},
		{"cascade", true, []*ir.Value{kv(c(1), c(2), L, c(8)), kv(c(1), c(2), L, c(8)), kv(B, c(2), T, c(8)), kv(B, c(2), T, c(8))}, ""},
		{"cascade prefix batch", true, []*ir.Value{kv(B, c(2), L, c(8)), kv(B, c(2), L, c(8)), kv(B, c(2), T, c(8)), kv(B, c(2), T, c(8))}, "prefix must be [1, 2, L, 8]"},
		{"cascade prefix heads", true, []*ir.Value{kv(c(1), c(3), L, c(8)), kv(c(1), c(3), L, c(8)), kv(B, c(2), T, c(8)), kv(B, c(2), T, c(8))}, "prefix must be [1, 2, L, 8]"},
		{"cascade prefix K and V differ", true, []*ir.Value{kv(c(1), c(2), L, c(8)), kv(c(1), c(2), L.Add(c(1)), c(8)), kv(B, c(2), T, c(8)), kv(B, c(2), T, c(8))}, "differ in shape"},
		{"cascade prefix heads not dividing", true, []*ir.Value{kv(c(1), c(4), L, c(8)), kv(c(1), c(4), L, c(8)), kv(B, c(4), T, c(8)), kv(B, c(4), T, c(8))}, "do not divide"},
		{"cascade K and V differ", true, []*ir.Value{kv(c(1), c(2), L, c(8)), kv(c(1), c(2), L, c(8)), kv(B, c(2), T, c(8)), kv(B, c(2), S, c(8))}, "differ in shape"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := &ir.Node{Op: ir.OpAttention, Args: append([]*ir.Value{q}, tc.args...), Attr: ir.Attr{Attn: &ir.Attention{Scale: 1, Causal: true, Cascade: tc.cascade}}}
			res, err := ir.Infer(n)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !res[0].Type.Shape.Equal(q.Type.Shape) {
					t.Fatalf("result %s, want the query's shape", res[0].Type)
				}
				return
			}
			if err == nil || !strings.Contains(err.Msg, tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestLeavesBeforeStates builds a spec declaring a paged state before its
// layout inputs and a param: the graph verifies, every input and param leaf
// precedes the state leaf, and value ids follow the node order.
func TestLeavesBeforeStates(t *testing.T) {
	g, err := frontend.Parse("early.fu", `
layer early
dim B, S, T, P, N
const G = 2, Dh = 8
state  kv        : f32[2, B, G, T, Dh] @ paged(page=4, pages=P, indptr=kv_indptr, indices=kv_pages, last=kv_last)
input  q         : f32[B, G, S, Dh]
input  kv_indptr : i32[B + 1]
input  kv_pages  : i32[N]
input  kv_last   : i32[B]
state  other     : f32[2, B, G, T, Dh] @ ragged(indptr=kv_indptr)
param  w         : f32[Dh, Dh]
output o         : f32[B, G, S, Dh]
K, V = append(kv, q, q)
o    = softmax(causal(q @ transpose(K)), axis=-1) @ V @ w + 0 * reshape(sum(sum(sum(other, axis=4), axis=3), axis=0), [B, G, 1, 1])
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Verify(); err != nil {
		t.Fatalf("verify: %v\n%s", err, g)
	}
	seenState := false
	last := 0
	for i, n := range g.Nodes {
		switch {
		case n.Op == ir.OpState:
			seenState = true
		case n.Op.IsLeaf() && seenState:
			t.Fatalf("%s %s comes after a state:\n%s", n.Op, n.Outs[0].Name, g)
		}
		if n.ID != i+1 {
			t.Fatalf("node %d has id %d", i, n.ID)
		}
		for _, o := range n.Outs {
			if o.ID <= last {
				t.Fatalf("value ids do not follow the node order:\n%s", g)
			}
			last = o.ID
		}
	}
	var names []string
	for _, v := range g.States {
		names = append(names, v.Name)
	}
	if strings.Join(names, " ") != "kv other" {
		t.Fatalf("states %v, want in declaration order", names)
	}
	for _, v := range g.States {
		if v.Ragged == nil || v.Def.Attr.Layout == nil {
			t.Fatalf("state %s has no layout", v.Name)
		}
	}
}
