package interp

import (
	"fmt"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
)

// keysTSpec is attention over keys stored transposed, [B, G, Dh, T] (a
// state read through a reshape of its head dims), under a causal mask and
// a score bias varying along the keys: 6 query heads over 3 kv heads of 7
// (odd sizes, no tile multiple).
const keysTSpec = `
layer keys_t
dim B, S, T
const H = 6, G = 3, Dh = 7
input  q  : f32[B, H, S, Dh]
input  kb : f32[B, 1, S, T]
state  kd : f32[B, G*Dh, T]
state  vm : f32[B, G, T, Dh]
output o  : f32[B, H, S, Dh]
o = softmax(causal(q @ reshape(kd, [B, G, Dh, T]) / sqrt(Dh) + kb), axis=-1) @ vm
`

// TestRunPlanKeysTransposed checks that the attention node over keys
// stored transposed (keys=transposed) computes, in the reference and in
// the plan's FlashAttention schedule, what the written graph computes op by
// op: at a decode step over 2999 keys (several splits) and a prefill of 17
// queries over 23 keys, to 1e-12 (both float64, the plan only reorders the
// arithmetic).
func TestRunPlanKeysTransposed(t *testing.T) {
	g, err := frontend.Parse("keys_t.fu", keysTSpec)
	if err != nil {
		t.Fatal(err)
	}
	for _, dims := range []map[string]int64{{"B": 3, "S": 1, "T": 2999}, {"B": 2, "S": 17, "T": 23}} {
		t.Run(fmt.Sprintf("S=%d", dims["S"]), func(t *testing.T) {
			st := planCase{g: g, dims: dims, seed: dims["T"], opt: PlanOptions{CrossCheck: 1e-12}}.check(t)
			k := attentionKernel(t, st.Plan)
			if at := k.Nodes[0].Attr.Attn; !at.KeysT {
				t.Fatalf("attention %s does not read the keys transposed", at)
			}
			if dims["S"] == 1 && k.Launch.Splits < 2 {
				t.Errorf("decode over %d keys has %d splits", dims["T"], k.Launch.Splits)
			}
		})
	}
}
