package gpu

import (
	"testing"

	"github.com/fuser-dev/fuser/ir"
)

// TestValidPacked checks Reference.Valid on the unfused scores of packed
// prompts ([H, N, T + N], each token's row as long as its own sequence's
// keys): with prompts of 2, 0 and 3 tokens (an empty one between), the
// valid elements are H × Σ_b qlen_b × len_b, len_b the sequence's keys
// after the append (kv_indptr's), and every token's row is valid up to
// its sequence's length and not past it.
func TestValidPacked(t *testing.T) {
	c := Case{Spec: "varlen_small_ragged", Dims: map[string]int64{"B": 3, "N": 5, "T": 7}, Seed: DefaultSeed, QLens: []int{2, 0, 3}}
	g, err := c.Graph()
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := c.Inputs(g)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(g, c.Dims, false)
	if err != nil {
		t.Fatal(err)
	}
	layer, err := RunLayer(g, p.Dims, inputs)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := NewReference(p, inputs, layer)
	if err != nil {
		t.Fatal(err)
	}
	var scores *ir.Value
	for _, k := range p.Plan.Kernels {
		mm := k.Anchor()
		if mm.Op == ir.OpMatmul && mm.Args[0].Packed != nil && mm.Outs[0].Ragged != nil {
			scores = mm.Outs[0]
		}
	}
	if scores == nil {
		t.Fatal("no packed scores in the unfused plan")
	}
	valid, err := ref.Valid(scores)
	if err != nil {
		t.Fatal(err)
	}
	kv := inputs["kv_indptr"].Data
	qo := []int{0, 2, 2, 5}
	shape, err := scores.Type.Shape.Eval(p.Dims)
	if err != nil {
		t.Fatal(err)
	}
	h, n, cols := int(shape[0]), int(shape[1]), int(shape[2])
	want := 0
	for b := range 3 {
		want += h * (qo[b+1] - qo[b]) * int(kv[b+1]-kv[b])
	}
	got := 0
	for i := range h * n * cols {
		if valid(i) {
			got++
		}
	}
	if got != want || want == 0 {
		t.Errorf("%d valid scores, want %d", got, want)
	}
	// The first token of the third prompt (token 2): its row is its
	// sequence's length, after the empty prompt.
	l2 := int(kv[3] - kv[2])
	if l2 >= cols || l2 < 1 {
		t.Fatalf("sequence 2 has %d keys of %d columns: the case no longer tells the sequences apart", l2, cols)
	}
	if row := 2 * cols; !valid(row+l2-1) || valid(row+l2) {
		t.Errorf("token 2's row is not valid up to its sequence's %d keys", l2)
	}
}
