package interp

import (
	"fmt"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
)

// keysTSpec is attention over keys stored transposed, [B, G, Dh, T] (a
// state read through a reshape of its head dims), a format of its dtype, under a
// causal mask and a score bias varying along the keys: 6 query heads
// over 3 kv heads of 7 (odd sizes, no tile multiple).
const keysTSpec = `
layer keys_t
dim B, S, T
const H = 6, G = 3, Dh = 7
input  q  : %[1]s[B, H, S, Dh]
input  kb : %[1]s[B, 1, S, T]
state  kd : %[1]s[B, G*Dh, T]
state  vm : %[1]s[B, G, T, Dh]
output o  : %[1]s[B, H, S, Dh]
o = softmax(causal(q @ reshape(kd, [B, G, Dh, T]) / sqrt(Dh) + kb), axis=-1) @ vm
`

// TestRunPlanKeysTransposed checks that the attention node over keys
// stored transposed (keys=transposed) computes, in the reference and in
// the plan's FlashAttention schedule, what the written graph computes op by
// op: at a decode step over 2999 keys (several splits) and a prefill of 17
// queries over 23 keys, to 1e-12 (both float64, the plan only reorders the
// arithmetic), at f32 (the CUDA-core kernels' schedule) and bf16 (the
// tensor-core kernels': 16-key decode tiles, mma.sync prefill tiles).
func TestRunPlanKeysTransposed(t *testing.T) {
	for _, dt := range []string{"f32", "bf16"} {
		g, err := frontend.Parse("keys_t.fu", fmt.Sprintf(keysTSpec, dt))
		if err != nil {
			t.Fatal(err)
		}
		for _, dims := range []map[string]int64{{"B": 3, "S": 1, "T": 2999}, {"B": 2, "S": 17, "T": 23}} {
			t.Run(fmt.Sprintf("%s/S=%d", dt, dims["S"]), func(t *testing.T) {
				keysTransposedPlan(t, g, dims, dt == "bf16")
			})
		}
	}
}

// keysTransposedPlan checks keysTSpec's plan at dims: on tensor cores
// (mma.sync) when flash is set, else on CUDA cores.
func keysTransposedPlan(t *testing.T, g *ir.Graph, dims map[string]int64, flash bool) {
	st := planCase{g: g, dims: dims, seed: dims["T"], opt: PlanOptions{CrossCheck: 1e-12}}.check(t)
	k := attentionKernel(t, st.Plan)
	if l := k.Launch; l.Variant.SIMT() == flash || l.WGMMA {
		t.Errorf("keys stored transposed launch %s, want tensor cores (mma.sync): %t", l, flash)
	}
	if at := k.Nodes[0].Attr.Attn; !at.KeysT {
		t.Fatalf("attention %s does not read the keys transposed", at)
	}
	if dims["S"] == 1 && k.Launch.Splits < 2 {
		t.Errorf("decode over %d keys has %d splits", dims["T"], k.Launch.Splits)
	}
}
