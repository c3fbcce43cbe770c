package interp

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/specs"
)

// layerSpec is a Llama-style decoder layer at odd sizes: RMSNorm, rope,
// grouped-query causal attention over a contiguous cache, SwiGLU MLP.
const layerSpec = `
layer tinyodd
dim B, S, T
const D = 20, H = 6, G = 3, Dh = 4, F = 28, eps = 1e-5
input  x    : {{dt}}[B, S, D]
input  pos  : i32[B, S]
param  wn1  : {{dt}}[D]
param  wqkv : {{dt}}[D, (H + 2*G)*Dh]
param  wo   : {{dt}}[H*Dh, D]
param  wn2  : {{dt}}[D]
param  wgu  : {{dt}}[D, 2*F]
param  wd   : {{dt}}[F, D]
state  kv   : {{dt}}[2, B, G, T, Dh]
output y    : {{dt}}[B, S, D]

fn rmsnorm(x, w) = x * rsqrt(mean(x * x, axis=-1) + eps) * w

h          = rmsnorm(x, wn1)
q0, k0, v0 = split(h @ wqkv, [H*Dh, G*Dh, G*Dh], axis=-1)
q          = transpose(rope(reshape(q0, [B, S, H, Dh]), pos, theta=500), [0, 2, 1, 3])
k          = transpose(rope(reshape(k0, [B, S, G, Dh]), pos, theta=500), [0, 2, 1, 3])
v          = transpose(reshape(v0, [B, S, G, Dh]), [0, 2, 1, 3])
K, V       = append(kv, k, v)
s          = q @ transpose(K) / sqrt(Dh)
p          = softmax(causal(s), axis=-1)
a          = p @ V
h1         = x + reshape(transpose(a, [0, 2, 1, 3]), [B, S, H*Dh]) @ wo
g, u       = split(rmsnorm(h1, wn2) @ wgu, [F, F], axis=-1)
y          = h1 + (silu(g) * u) @ wd
`

// refLayer computes layerSpec directly.
func refLayer(in map[string]*Tensor) []float64 {
	const D, H, G, Dh, F, eps, theta = 20, 6, 3, 4, 28, 1e-5, 500.0
	x := in["x"]
	B, S := x.Shape[0], x.Shape[1]
	h := refRMSNorm(x.Data, in["wn1"].Data, D, eps)
	qkv := refMatmul(h, in["wqkv"].Data, D, (H+2*G)*Dh)
	W := (H + 2*G) * Dh
	q := make([]float64, B*S*H*Dh)
	k := make([]float64, B*S*G*Dh)
	v := make([]float64, B*S*G*Dh)
	for r := range B * S {
		copy(q[r*H*Dh:], qkv[r*W:r*W+H*Dh])
		copy(k[r*G*Dh:], qkv[r*W+H*Dh:r*W+(H+G)*Dh])
		copy(v[r*G*Dh:], qkv[r*W+(H+G)*Dh:(r+1)*W])
	}
	q = refRope(q, in["pos"].Data, B, S, H, Dh, theta)
	k = refRope(k, in["pos"].Data, B, S, G, Dh, theta)
	// Heads first: qh [B, H, S, Dh], new keys and values [B, G, S, Dh].
	qh, kh, vh := New(B, H, S, Dh), New(B, G, S, Dh), New(B, G, S, Dh)
	for b := range B {
		for s := range S {
			for hh := range H {
				copy(qh.Data[((b*H+hh)*S+s)*Dh:][:Dh], q[((b*S+s)*H+hh)*Dh:])
			}
			for g := range G {
				copy(kh.Data[((b*G+g)*S+s)*Dh:][:Dh], k[((b*S+s)*G+g)*Dh:])
				copy(vh.Data[((b*G+g)*S+s)*Dh:][:Dh], v[((b*S+s)*G+g)*Dh:])
			}
		}
	}
	att := refAttention(qh, G, contiguousTokens(in["kv"], kh, 0), contiguousTokens(in["kv"], vh, 1), attnOpts{scale: 1 / math.Sqrt(Dh), causal: true})
	flat := make([]float64, B*S*H*Dh)
	for b := range B {
		for hh := range H {
			for s := range S {
				copy(flat[((b*S+s)*H+hh)*Dh:][:Dh], att[((b*H+hh)*S+s)*Dh:])
			}
		}
	}
	o := refMatmul(flat, in["wo"].Data, H*Dh, D)
	h1 := make([]float64, len(o))
	for i := range o {
		h1[i] = x.Data[i] + o[i]
	}
	mlp := refSwiGLU(refRMSNorm(h1, in["wn2"].Data, D, eps), in["wgu"].Data, in["wd"].Data, D, F)
	for i := range mlp {
		mlp[i] += h1[i]
	}
	return mlp
}

// TestLayer runs the whole layer against the reference.
func TestLayer(t *testing.T) {
	g := build(t, subst(layerSpec, "dt", "f32"))
	for _, c := range []struct{ B, S, T int64 }{{3, 1, 33}, {3, 7, 0}, {1, 7, 1}, {2, 5, 9}} {
		t.Run(fmt.Sprintf("B=%d/S=%d/T=%d", c.B, c.S, c.T), func(t *testing.T) {
			dims := map[string]int64{"B": c.B, "S": c.S, "T": c.T}
			in, full := setup(t, g, dims, c.B*10000+c.S*100+c.T)
			res := run(t, g, full, in)
			close(t, "y", res.Outputs["y"], refLayer(in))
		})
	}
}

// TestRoundLayer checks that rounding every value to bf16 moves the
// layer's output by about bf16's precision: clearly, but not more.
func TestRoundLayer(t *testing.T) {
	for _, c := range []struct {
		dt     string
		lo, hi float64
	}{
		{"bf16", 1e-3, 5e-2},
		{"f16", 1e-5, 5e-3},
		{"f32", 1e-9, 1e-5},
	} {
		t.Run(c.dt, func(t *testing.T) {
			g := build(t, subst(layerSpec, "dt", c.dt))
			dims := map[string]int64{"B": 3, "S": 7, "T": 33}
			in, full := setup(t, g, dims, 7)
			exact := run(t, g, full, in)
			rounded, err := Run(g, full, in, Options{Round: true})
			if err != nil {
				t.Fatal(err)
			}
			e := relErr(rounded.Outputs["y"].Data, exact.Outputs["y"].Data)
			t.Logf("%s: relative change %.3g", c.dt, e)
			if e < c.lo || e > c.hi {
				t.Fatalf("%s rounding changes y by %.3g, want between %g and %g", c.dt, e, c.lo, c.hi)
			}
			// Every value of the rounded run is representable in its dtype.
			for v, x := range rounded.Values {
				for _, d := range x.Data {
					if r := Round(d, v.Type.DType); r != d && !math.IsNaN(d) {
						t.Fatalf("%s holds %g, not a %s value", v.Ref(), d, v.Type.DType)
					}
				}
			}
		})
	}
}

// TestPieces checks RMSNorm, rope and the SwiGLU MLP on their own.
func TestPieces(t *testing.T) {
	tests := []struct {
		name, src string
		dims      map[string]int64
		want      func(in map[string]*Tensor) []float64
	}{
		{"rmsnorm", `
layer rms
dim B, S
const D = 13, eps = 1e-6
input x : f32[B, S, D]
param w : f32[D]
output y : f32[B, S, D]
y = x * rsqrt(mean(x * x, axis=-1) + eps) * w
`, map[string]int64{"B": 3, "S": 7}, func(in map[string]*Tensor) []float64 {
			return refRMSNorm(in["x"].Data, in["w"].Data, 13, 1e-6)
		}},
		{"rope", `
layer rp
dim B, S
const H = 3, Dh = 10
input x : f32[B, S, H, Dh]
input pos : i32[B, S]
output y : f32[B, S, H, Dh]
y = rope(x, pos, theta=1000)
`, map[string]int64{"B": 3, "S": 7}, func(in map[string]*Tensor) []float64 {
			return refRope(in["x"].Data, in["pos"].Data, 3, 7, 3, 10, 1000)
		}},
		{"rope default theta, large positions", `
layer rp
dim B, S
const H = 2, Dh = 6
input x : f32[B, S, H, Dh]
input p0 : f32[B, S]
output y : f32[B, S, H, Dh]
y = rope(x, cast(p0 * 3000 + 3000, i32))
`, map[string]int64{"B": 2, "S": 5}, func(in map[string]*Tensor) []float64 {
			pos := make([]float64, len(in["p0"].Data))
			for i, p := range in["p0"].Data {
				pos[i] = math.Trunc(p*3000 + 3000)
			}
			return refRope(in["x"].Data, pos, 2, 5, 2, 6, 10000)
		}},
		{"swiglu", `
layer mlp
dim B, S
const D = 11, F = 17
input x : f32[B, S, D]
param wgu : f32[D, 2*F]
param wd : f32[F, D]
output y : f32[B, S, D]
g, u = split(x @ wgu, [F, F], axis=-1)
y = (silu(g) * u) @ wd
`, map[string]int64{"B": 3, "S": 7}, func(in map[string]*Tensor) []float64 {
			return refSwiGLU(in["x"].Data, in["wgu"].Data, in["wd"].Data, 11, 17)
		}},
		{"gelu sigmoid tanh exp log", `
layer act
dim N
input x : f32[N]
output y : f32[N]
y = gelu(x) + sigmoid(x) * tanh(x) - exp(x) / log(x * x + 2) + max(x, 0.25) - min(x, -0.5) + sqrt(x * x)
`, map[string]int64{"N": 33}, func(in map[string]*Tensor) []float64 {
			var out []float64
			for _, x := range in["x"].Data {
				gelu := x * 0.5 * math.Erfc(-x/math.Sqrt2)
				sig := math.Exp(x) / (1 + math.Exp(x))
				out = append(out, gelu+sig*math.Tanh(x)-math.Exp(x)/math.Log(x*x+2)+math.Max(x, 0.25)-math.Min(x, -0.5)+math.Abs(x))
			}
			return out
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := build(t, tc.src)
			in, full := setup(t, g, tc.dims, 3)
			res := run(t, g, full, in)
			close(t, "y", res.Outputs["y"], tc.want(in))
		})
	}
}

// TestEmbeddedTiny runs the shipped tiny spec, exact and rounded.
func TestEmbeddedTiny(t *testing.T) {
	name, src, ok := specs.Source("tiny")
	if !ok {
		t.Skip("no embedded tiny spec")
	}
	g, err := frontend.Parse(name, src)
	if err != nil {
		t.Fatal(err)
	}
	in, full := setup(t, g, map[string]int64{"B": 3, "S": 7, "T": 33}, 1)
	exact := run(t, g, full, in)
	rounded, err := Run(g, full, in, Options{Round: true})
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(rounded.Outputs["y"].Data, exact.Outputs["y"].Data); e > 5e-2 || e == 0 {
		t.Fatalf("bf16 rounding changes y by %g", e)
	}
	for _, x := range exact.Outputs["y"].Data {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("non-finite output %g", x)
		}
	}
}

// BenchmarkLayer runs a mid-sized layer (D=512, F=1536, 8 heads of 64 over
// 2 kv heads, 16 new tokens after 256 cached).
func BenchmarkLayer(b *testing.B) {
	src := strings.NewReplacer("D = 20, H = 6, G = 3, Dh = 4, F = 28", "D = 512, H = 8, G = 2, Dh = 64, F = 1536").Replace(subst(layerSpec, "dt", "bf16"))
	g, err := frontend.Parse("bench.fu", src)
	if err != nil {
		b.Fatal(err)
	}
	dims := map[string]int64{"B": 2, "S": 16, "T": 256}
	in, err := RandomInputs(g, dims, 1)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Run(g, dims, in, Options{Round: true}); err != nil {
			b.Fatal(err)
		}
	}
}
