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

// TestSplitKPartials checks that a split-K GEMV pays for its partial sums:
// one f32 per row, column and split, written by the splits and read back by
// the merge.
func TestSplitKPartials(t *testing.T) {
	const src = `layer proj
dim M
input  a : bf16[M, 4096]
param  w : bf16[4096, 256]
output y : bf16[M, 256]
y = a @ w
`
	g, err := ir.Parse("proj.fu", src)
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int64{"M": 3}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := st.Plan.Costs(dims)
	if err != nil {
		t.Fatal(err)
	}
	l := st.Plan.Kernels[0].Launch
	// 256 columns are 8 GEMV blocks, far from 132 SMs: split K = 4096 into
	// min(ceil(132/8), 4096/512) = 8.
	if len(cs) != 1 || l.Variant != "gemv" || l.Splits != 8 || cs[0].Launches != 2 {
		t.Fatalf("plan %s, costs %+v: want one split-K GEMV of 8 splits in 2 launches", st.Plan, cs)
	}
	partials := int64(8 * 3 * 256 * 4)
	if want := int64(3*4096*2+4096*256*2) + partials; cs[0].BytesRead != want {
		t.Errorf("read %d bytes, want %d (a, w and the partials)", cs[0].BytesRead, want)
	}
	if want := int64(3*256*2) + partials; cs[0].BytesWritten != want {
		t.Errorf("wrote %d bytes, want %d (y and the partials)", cs[0].BytesWritten, want)
	}
}
