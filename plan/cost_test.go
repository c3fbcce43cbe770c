package plan_test

import (
	"testing"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
)

// TestPrefillL2Window checks the K/V re-streaming model of prefill
// attention with causal and sliding-window tile skipping: query block i of
// Br rows streams the keys between its first query's window start and its
// last query.
func TestPrefillL2Window(t *testing.T) {
	const src = `layer swa
dim N
const Dh = 64
input  q : bf16[1, 1, N, Dh]
input  k : bf16[1, 1, N, Dh]
input  v : bf16[1, 1, N, Dh]
output o : bf16[1, 1, N, Dh]
o = softmax(window(q @ transpose(k) * 0.125, 300), axis=-1) @ v
`
	g, err := ir.Parse("swa.fu", src)
	if err != nil {
		t.Fatal(err)
	}
	const n, br, w, row = 1000, 128, 300, 2 * 64 * 2
	dims := map[string]int64{"N": n}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := st.Plan.Costs(dims)
	if err != nil {
		t.Fatal(err)
	}
	var streamed int64
	for start := int64(0); start < n; start += br {
		hi := min(start+br, n)
		lo := max(0, start-w+1)
		streamed += (hi - lo) * row
	}
	if want := streamed - n*row; len(cs) != 1 || cs[0].L2Bytes != want {
		t.Fatalf("costs %+v, want one attention kernel with %d L2 bytes", cs, want)
	}
	// Every query sees min(i+1, 300) keys.
	var pairs int64
	for i := int64(0); i < n; i++ {
		pairs += min(i+1, w)
	}
	if want := 4 * 64 * pairs; cs[0].Flops != want {
		t.Errorf("flops %d, want %d", cs[0].Flops, want)
	}
}
