package interp

import (
	"testing"
)

// TestGather checks an embedding lookup and an out-of-range id.
func TestGather(t *testing.T) {
	g := build(t, `
layer emb
dim B, S
const V = 11, D = 5
input  ids : i32[B, S]
param  tab : f32[V, D]
output y   : f32[B, S, D]
y = gather(tab, ids) * 2
`)
	in, full := setup(t, g, map[string]int64{"B": 3, "S": 7}, 2)
	res := run(t, g, full, in)
	var want []float64
	seen := map[float64]bool{}
	for _, id := range in["ids"].Data {
		if id < 0 || id >= 11 {
			t.Fatalf("RandomInputs gave id %g out of [0, 11)", id)
		}
		seen[id] = true
		for _, x := range in["tab"].Data[int(id)*5 : int(id)*5+5] {
			want = append(want, 2*x)
		}
	}
	if len(seen) < 3 {
		t.Fatalf("RandomInputs ids are not random: %v", in["ids"].Data)
	}
	close(t, "y", res.Outputs["y"], want)
	in["ids"].Data[4] = 11
	if _, err := Run(g, full, in, Options{}); err == nil {
		t.Fatal("an id past the table ran without error")
	}
}
