package passes_test

import (
	"fmt"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/plan"
)

// keysLayer is cross-attention of dtype dt over keys declared as keys:
// "kt : [B, G, Dh, T]" read as q @ kt, or "km : [B, G, T, Dh]" read as
// q @ transpose(km).
func keysLayer(t *testing.T, dt string, stored bool) string {
	t.Helper()
	decl, read := "km : %[1]s[B, G, T, Dh]", "q @ transpose(km)"
	if stored {
		decl, read = "kt : %[1]s[B, G, Dh, T]", "q @ kt"
	}
	return fmt.Sprintf(`layer keys
dim B, S, T
const H = 8, G = 2, Dh = 64
input  q  : %[1]s[B, H, S, Dh]
state  `+decl+`
state  vm : %[1]s[B, G, T, Dh]
output o  : %[1]s[B, H, S, Dh]
o = softmax(causal(`+read+` / sqrt(Dh)), axis=-1) @ vm
`, dt)
}

// TestKeysStoredTransposed checks attention over keys stored transposed:
// the plan's one attention kernel reads them transposed and --explain says
// so; at bf16 it runs on tensor cores, a prefill on mma.sync where the
// row form takes wgmma (the launch pass routes it and says why); and the
// cost model counts the bytes of the row form read by the same kernel
// (f32, where both run on CUDA cores), at decode and prefill.
func TestKeysStoredTransposed(t *testing.T) {
	for _, dims := range []map[string]int64{{"B": 3, "S": 1, "T": 777}, {"B": 2, "S": 131, "T": 45}} {
		t.Run(fmt.Sprintf("S=%d", dims["S"]), func(t *testing.T) {
			g, err := frontend.Parse("keys.fu", keysLayer(t, "bf16", true))
			if err != nil {
				t.Fatal(err)
			}
			st := fusedState(t, g, dims)
			prefill := dims["S"] > 1
			wg := "keys stored transposed, [B, G, Dh, T]: its tensor maps stage keys as rows of Dh elements; the mma.sync prefill runs it"
			if !logHas(st, "the kernel reads the keys transposed") || logHas(st, wg) != prefill || logHas(st, "the CUDA-core kernel runs it") {
				t.Errorf("the log does not say the keys are read transposed, on tensor cores (the prefill on mma.sync: %t):\n%s", prefill, logText(st))
			}
			want := "decode"
			if prefill {
				want = "prefill"
			}
			if n, v := attentionKernels(st.Plan); n != 1 || v != want || wgmma(st.Plan) {
				t.Errorf("%d attention kernels, the last %s (wgmma %t): want one %s on mma.sync", n, v, wgmma(st.Plan), want)
			}
			rg, err := frontend.Parse("keys.fu", keysLayer(t, "bf16", false))
			if err != nil {
				t.Fatal(err)
			}
			if rows := fusedState(t, rg, dims).Plan; wgmma(rows) != prefill {
				t.Errorf("the row form's prefill on wgmma: %t, want %t", wgmma(rows), prefill)
			}
			var costs [2]plan.Cost
			for i, stored := range []bool{false, true} {
				g, err := frontend.Parse("keys.fu", keysLayer(t, "f32", stored))
				if err != nil {
					t.Fatal(err)
				}
				cs, err := fusedPlan(t, g, dims).Costs(dims)
				if err != nil {
					t.Fatal(err)
				}
				costs[i] = plan.Total(cs)
			}
			if costs[0].Bytes() != costs[1].Bytes() || costs[0].L2Bytes != costs[1].L2Bytes || costs[0].Flops != costs[1].Flops || costs[0].Bytes() == 0 {
				t.Errorf("keys stored transposed cost %+v, as rows %+v: want the same", costs[1], costs[0])
			}
		})
	}
}

// wgmma reports whether some attention kernel of p is the wgmma prefill.
func wgmma(p *plan.Plan) bool {
	for _, k := range p.Kernels {
		if k.Strategy == plan.Attention && k.Launch.WGMMA {
			return true
		}
	}
	return false
}
