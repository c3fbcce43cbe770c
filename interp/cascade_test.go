package interp

import (
	"fmt"
	"math"
	"testing"
)

// TestCascadePaged checks attention over a shared contiguous prefix
// concatenated with a paged per-request cache: the concat's ragged part
// follows the prefix, so each sequence has L + len_b + S keys.
func TestCascadePaged(t *testing.T) {
	for _, page := range []int{1, 4} {
		g := build(t, fmt.Sprintf(`
layer casc
dim B, S, T, L, P, N
const H = 4, G = 2, Dh = 8
input  q         : f32[B, H, S, Dh]
input  k         : f32[B, G, S, Dh]
input  v         : f32[B, G, S, Dh]
input  kv_indptr : i32[B + 1]
input  kv_pages  : i32[N]
input  kv_last   : i32[B]
state  prefix    : f32[2, 1, G, L, Dh]
state  kv        : f32[2, B, G, T, Dh] %s
output o         : f32[B, H, S, Dh]
K, V   = append(kv, k, v)
pk, pv = split(prefix, [1, 1], axis=0)
K_all  = concat(reshape(pk, [1, G, L, Dh]), K, axis=2)
V_all  = concat(reshape(pv, [1, G, L, Dh]), V, axis=2)
o      = softmax(causal(q @ transpose(K_all) / sqrt(Dh)), axis=-1) @ V_all
`, pagedLayout(page)))
		for _, S := range []int64{1, 7} {
			t.Run(fmt.Sprintf("page=%d/S=%d", page, S), func(t *testing.T) {
				in, full := setup(t, g, map[string]int64{"B": 3, "S": S, "T": 13, "L": 5}, S)
				res := run(t, g, full, in)
				kp := func(c int, nw *Tensor) func(b, g int) [][]float64 {
					return prefixed(in["prefix"], c, pagedTokens(in["kv"], in["kv_indptr"], in["kv_pages"], in["kv_last"], nw, c))
				}
				want := refAttention(in["q"], 2, kp(0, in["k"]), kp(1, in["v"]), attnOpts{scale: 1 / math.Sqrt(8), causal: true})
				close(t, "o", res.Outputs["o"], want)
			})
		}
	}
}
