package cuda

import "testing"

// TestSplitEpiShape checks the split GEMV epilogue's batch and chunk: at
// most gemvEpiLoads partials in flight a thread, 1 to 4 elements, the
// chunks covering the splits, and the shapes the Llama-3-8B decode and
// Mixtral's router and the suite's widest unfused scores matmul plan
// take.
func TestSplitEpiShape(t *testing.T) {
	for _, tc := range []struct{ no, ns, batch, chunk int64 }{
		{2, 5, 4, 5},   // QKV + RoPE: a column and its rotation partner, 5 splits
		{1, 8, 4, 8},   // O and down projections
		{1, 64, 1, 64}, // Mixtral's router at B=2, S=3
		{1, 66, 1, 64}, // dec_c128's unfused q·kᵀ over 100,002 keys: two chunks
		{2, 64, 1, 32},
		{2, 2, 4, 2},
		{3, 40, 1, 21},
		{1, 200, 1, 64},
	} {
		b, c := splitEpiShape(tc.no, tc.ns)
		if b != tc.batch || c != tc.chunk {
			t.Errorf("splitEpiShape(%d, %d) = %d, %d; want %d, %d", tc.no, tc.ns, b, c, tc.batch, tc.chunk)
		}
	}
	for no := int64(1); no <= 4; no++ {
		for ns := int64(2); ns <= 300; ns++ {
			b, c := splitEpiShape(no, ns)
			if b < 1 || b > 4 || c < 1 || c > ns || b*no*c > gemvEpiLoads {
				t.Fatalf("splitEpiShape(%d, %d) = %d, %d: outside 1..4 elements, 1..%d splits, %d loads", no, ns, b, c, ns, gemvEpiLoads)
			}
		}
	}
}
