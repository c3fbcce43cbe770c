package passes_test

import (
	"testing"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs/testlayers"
)

// TestPackedPairingLaunch checks the launches of the unfused scores and
// output of packed prompts (q @ transpose(K) and p @ V, each token against
// its own sequence's cache): every token is a unit of its own, H/G = 2
// rows (its GQA group) against one of the G = 2 kv heads, so G·N units on
// the grid's y axis, at most plan.MaxGridYZ of them (the kernel strides
// over the rest); the key axis varies per token, so K is not split.
func TestPackedPairingLaunch(t *testing.T) {
	g, err := testlayers.Varlen("small_ragged")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ n, gridY int64 }{{5, 10}, {123, 246}, {40000, plan.MaxGridYZ}} {
		st, err := passes.Run(g, passes.Unfused, passes.Options{Dims: map[string]int64{"B": 3, "N": tt.n, "T": 17}, Target: plan.H200})
		if err != nil {
			t.Fatal(err)
		}
		pairs := 0
		for _, k := range st.Plan.Kernels {
			mm := k.Anchor()
			if mm.Op != ir.OpMatmul || mm.Args[0].Packed == nil || len(mm.Args[1].Type.Shape) != 4 {
				continue
			}
			pairs++
			l := k.Launch
			if l.Variant != plan.VariantGemv || l.Grid[1] != tt.gridY || l.Grid[2] != 1 || l.Tile[0] != 2 || l.Splits != 1 {
				t.Errorf("N=%d %s: %s tile %v, want a GEMV of 2 rows a unit on %d units, unsplit", tt.n, k.Name, l, l.Tile, tt.gridY)
			}
		}
		if pairs != 2 {
			t.Errorf("N=%d: %d matmuls pairing tokens with their sequences, want 2", tt.n, pairs)
		}
	}
}
