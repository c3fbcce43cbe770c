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
		w, err := viewOf(v, nil)
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
