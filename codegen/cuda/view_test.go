package cuda

import (
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
)

// TestViewSliceThenReshape: a split's part reshaped addresses its parent's
// rows, skipping the other part: [B, 14] of [B, 16] as [B*14] and as
// [B, 2, 7] (a digit of the part's size, not the parent's, so that the
// reshape neither merges it with the row's digit nor fails to divide it).
func TestViewSliceThenReshape(t *testing.T) {
	src := `layer v
dim B
input  x : f32[B, 16]
output y : f32[B*14]
output z : f32[B, 2, 7]
output u : f32[B, 2]
a, b = split(x, [14, 2], axis=1)
y = reshape(a, [B*14]) + 1
z = reshape(a, [B, 2, 7]) * 2
u = b
`
	g, err := frontend.Parse("v.fu", src)
	if err != nil {
		t.Fatal(err)
	}
	const B = 3
	want := func(j int64) int64 { return j/14*16 + j%14 }
	for _, n := range g.Nodes {
		if n.Op != ir.OpReshape {
			continue
		}
		v := n.Outs[0]
		w, err := viewOf(v, g, nil)
		if err != nil {
			t.Fatalf("%s: %v", v.Ref(), err)
		}
		shape := v.Type.Shape
		count := 0
		for j := int64(0); j < B*14; j++ {
			idx := []ix{ixc(j)}
			if len(shape) == 3 {
				idx = []ix{ixc(j / 14), ixc(j % 14 / 7), ixc(j % 7)}
			}
			got, ok := w.offset(idx).eval(map[string]int64{"dim_B": B})
			if !ok || got != want(j) {
				t.Fatalf("%s: element %d at offset %d (%v), want %d", v.Ref(), j, got, ok, want(j))
			}
			count++
		}
		if count != B*14 {
			t.Fatalf("%s: %d elements checked", v.Ref(), count)
		}
	}
}

// TestViewAppendedState: a contiguous state an append writes is stored as
// [2, B, G, T+S, Dh], so a read of the state itself (here a matmul over
// its rows, as in specgen's state_not_a_parameter) steps T+S tokens from
// one head to the next, not T.
func TestViewAppendedState(t *testing.T) {
	src := `layer v
dim B, S, T
input  k : f32[B, 2, S, 3]
input  v : f32[B, 2, S, 3]
state  kv : f32[2, B, 2, T, 3]
param  w : f32[3, 5]
output y : f32[2, B, 2, T, 5]
output K : f32[B, 2, S + T, 3]
output V : f32[B, 2, S + T, 3]
K, V = append(kv, k, v)
y = kv @ w
`
	g, err := frontend.Parse("v.fu", src)
	if err != nil {
		t.Fatal(err)
	}
	var kv *ir.Value
	for _, n := range g.Nodes {
		if n.Op == ir.OpState {
			kv = n.Outs[0]
		}
	}
	w, err := viewOf(kv, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int64{"B": 3, "S": 5, "T": 6}
	const B, S, T = 3, 5, 6
	want := [][2]int64{{2, B * 2 * (T + S) * 3}, {B, 2 * (T + S) * 3}, {2, (T + S) * 3}, {T, 3}, {3, 1}}
	if len(w.axes) != len(want) || len(w.base) != 0 {
		t.Fatalf("view of %d axes at base %v, want %d at 0", len(w.axes), w.base, len(want))
	}
	for i, a := range w.axes {
		if len(a.subs) != 1 || len(a.off) != 0 {
			t.Fatalf("axis %d: %d digits, offset %v", i, len(a.subs), a.off)
		}
		size, err := a.subs[0].size.eval(dims)
		if err != nil {
			t.Fatal(err)
		}
		stride, err := a.subs[0].stride.eval(dims)
		if err != nil {
			t.Fatal(err)
		}
		if size != want[i][0] || stride != want[i][1] {
			t.Errorf("axis %d: %d positions %d apart, want %d positions %d apart", i, size, stride, want[i][0], want[i][1])
		}
	}
}
