package interp

import (
	"math"
	"testing"
)

// TestMoE checks a top-2 mixture of experts (topk, softmax over the kept
// logits, a broadcast batched matmul, reduction over experts).
func TestMoE(t *testing.T) {
	g := build(t, `
layer moe
dim B, S
const D = 6, E = 5, F = 7
input  h   : f32[B, S, D]
param  wr  : f32[D, E]
param  w13 : f32[E, D, 2*F]
param  w2  : f32[E, F, D]
output y   : f32[B, S, D]
r       = h @ wr
weights = softmax(topk(r, 2), axis=-1)
hx      = reshape(h, [1, B*S, D]) @ w13
g, u    = split(hx, [F, F], axis=-1)
ye      = (silu(g) * u) @ w2
we      = reshape(transpose(reshape(weights, [B*S, E]), [1, 0]), [E, B*S, 1])
y       = reshape(sum(ye * we, axis=0), [B, S, D])
`)
	const D, E, F = 6, 5, 7
	in, full := setup(t, g, map[string]int64{"B": 3, "S": 7}, 5)
	res := run(t, g, full, in)
	var want []float64
	for tok := range 21 {
		x := in["h"].Data[tok*D : (tok+1)*D]
		logits := refMatmul(x, in["wr"].Data, D, E)
		// The two largest, lower index first on ties.
		i1 := 0
		for e := range E {
			if logits[e] > logits[i1] {
				i1 = e
			}
		}
		i2 := -1
		for e := range E {
			if e != i1 && (i2 < 0 || logits[e] > logits[i2]) {
				i2 = e
			}
		}
		z := math.Exp(logits[i1]) + math.Exp(logits[i2])
		y := make([]float64, D)
		for _, e := range []int{i1, i2} {
			w := math.Exp(logits[e]) / z
			out := refSwiGLU(x, in["w13"].Data[e*D*2*F:(e+1)*D*2*F], in["w2"].Data[e*F*D:(e+1)*F*D], D, F)
			for d := range D {
				y[d] += w * out[d]
			}
		}
		want = append(want, y...)
	}
	close(t, "y", res.Outputs["y"], want)
}

// TestTopKTies checks that ties keep the lower index and that the rest is
// masked.
func TestTopKTies(t *testing.T) {
	g := build(t, `
layer tk
dim N
input  x : f32[N, 6]
output y : f32[N, 6]
y = topk(x, 3)
`)
	x := FromData([]int{2, 6}, []float64{1, 3, 3, 2, 3, 0, 5, 5, 5, 5, 5, 5})
	res := run(t, g, map[string]int64{"N": 2}, map[string]*Tensor{"x": x})
	inf := math.Inf(-1)
	want := []float64{inf, 3, 3, inf, 3, inf, 5, 5, 5, inf, inf, inf}
	for i, w := range want {
		if res.Outputs["y"].Data[i] != w {
			t.Fatalf("topk = %v, want %v", res.Outputs["y"].Data, want)
		}
	}
}
