package interp

import (
	"fmt"
	"testing"

	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs/testlayers"
)

// TestRunPlanVarlen runs the layers over packed prompts
// (testlayers.VarlenNames: a ragged cache; a paged one with GQA, a window
// and softcap) as their
// fused and unfused plans and compares them with the interpreter on the
// written graph, every row kernel cross-checked op by op: batches whose
// random split has an empty and a one-token prompt, one token in all, a
// single prompt, and token counts no 128-query tile divides over empty
// and longer caches. The fused plan's attention is one varlen kernel over
// the sequences' query tiles.
func TestRunPlanVarlen(t *testing.T) {
	for _, name := range testlayers.VarlenNames() {
		g, err := testlayers.Varlen(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range []map[string]int64{
			{"B": 5, "N": 123, "T": 40}, {"B": 3, "N": 1, "T": 0}, {"B": 1, "N": 17, "T": 0}, {"B": 4, "N": 300, "T": 100},
		} {
			t.Run(fmt.Sprintf("%s/B=%d,N=%d,T=%d", name, d["B"], d["N"], d["T"]), func(t *testing.T) {
				st := planCase{g: g, dims: d, seed: int64(i), unfused: true, opt: PlanOptions{CrossCheck: 1e-12}}.check(t)
				if l := attentionKernel(t, st.Plan).Launch; l.Variant != plan.VariantVarlenSIMT {
					t.Fatalf("attention kernel runs %s", l.Variant)
				}
			})
		}
	}
}
