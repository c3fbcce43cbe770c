package interp

import (
	"fmt"
	"math"
	"testing"
)

// attnSpec is grouped-query attention over a KV cache; {{layout}} is the
// state's layout annotation, {{extra}} more declarations and {{score}} the
// masked scores written from s.
const attnSpec = `
layer attn
dim B, S, T{{dims}}
const H = 6, G = 2, Dh = 8
input  q  : f32[B, H, S, Dh]
input  k  : f32[B, G, S, Dh]
input  v  : f32[B, G, S, Dh]
{{extra}}
state  kv : f32[2, B, G, T, Dh] {{layout}}
output o  : f32[B, H, S, Dh]
K, V = append(kv, k, v)
s = q @ transpose(K) / sqrt(Dh)
o = softmax({{score}}, axis=-1) @ V
`

const pagedExtra = `
input kv_indptr : i32[B + 1]
input kv_pages  : i32[N]
input kv_last   : i32[B]`

func pagedLayout(page int) string {
	return fmt.Sprintf("@ paged(page=%d, pages=P, indptr=kv_indptr, indices=kv_pages, last=kv_last)", page)
}

// variants are the score expressions tested, with their reference options.
var variants = []struct {
	name, score string
	opts        attnOpts
}{
	{"causal", "causal(s)", attnOpts{causal: true}},
	{"window", "window(s, 4)", attnOpts{causal: true, window: 4}},
	{"window1", "window(s, 1)", attnOpts{causal: true, window: 1}},
	{"softcap", "causal(softcap(s * 20, 5))", attnOpts{causal: true, softcap: 5}},
	{"unmasked", "s", attnOpts{}},
}

// TestAttentionContiguous compares grouped-query attention over a contiguous
// cache with the reference, for decode (S=1) and prefill (S=7) and cache
// lengths 0 to 33.
func TestAttentionContiguous(t *testing.T) {
	for _, va := range variants {
		g := build(t, subst(attnSpec, "dims", "", "extra", "", "layout", "", "score", va.score))
		for _, S := range []int64{1, 7} {
			for _, T := range []int64{0, 1, 2, 5, 33} {
				t.Run(fmt.Sprintf("%s/S=%d/T=%d", va.name, S, T), func(t *testing.T) {
					dims := map[string]int64{"B": 3, "S": S, "T": T}
					in, full := setup(t, g, dims, S*100+T)
					res := run(t, g, full, in)
					o := va.opts
					o.scale = 1 / math.Sqrt(8)
					if o.softcap != 0 {
						o.scale *= 20
					}
					want := refAttention(in["q"], 2, contiguousTokens(in["kv"], in["k"], 0), contiguousTokens(in["kv"], in["v"], 1), o)
					close(t, "o", res.Outputs["o"], want)
					// The state after the step holds the cache then the new tokens.
					checkContiguousState(t, res.States["kv"], in["kv"], in["k"], in["v"])
				})
			}
		}
	}
}

// checkContiguousState checks a contiguous cache after append element by
// element: [2, B, G, T+S, Dh] with the old tokens then the new ones.
func checkContiguousState(t *testing.T, got, kv, k, v *Tensor) {
	t.Helper()
	B, G, T, Dh := kv.Shape[1], kv.Shape[2], kv.Shape[3], kv.Shape[4]
	S := k.Shape[2]
	if !got.SameShape([]int{2, B, G, T + S, Dh}) {
		t.Fatalf("state shape %v, want [2 %d %d %d %d]", got.Shape, B, G, T+S, Dh)
	}
	for c, nw := range []*Tensor{k, v} {
		for b := range B {
			for g := range G {
				for tok := range T + S {
					for d := range Dh {
						want := 0.0
						if tok < T {
							want = kv.At(c, b, g, tok, d)
						} else {
							want = nw.At(b, g, tok-T, d)
						}
						if x := got.At(c, b, g, tok, d); x != want {
							t.Fatalf("state[%d,%d,%d,%d,%d] = %g, want %g", c, b, g, tok, d, x, want)
						}
					}
				}
			}
		}
	}
}

// TestFullyMaskedRow checks that a row with every key masked gives 0, not
// NaN: with 4 queries over 2 keys, query i sits at key position i - 2, so
// queries 0 and 1 see no key.
func TestFullyMaskedRow(t *testing.T) {
	g := build(t, `
layer m
dim B
input  s : f32[B, 4, 2]
output p : f32[B, 4, 2]
p = softmax(causal(s), axis=-1)
`)
	in := map[string]*Tensor{"s": New(2, 4, 2)}
	for i := range in["s"].Data {
		in["s"].Data[i] = float64(i % 3)
	}
	res := run(t, g, map[string]int64{"B": 2}, in)
	e1 := math.Exp(1)
	row := [][]float64{{0, 0}, {0, 0}, {1, 0}, {1 / (1 + e1), e1 / (1 + e1)}}
	var want []float64
	for b := range 2 {
		for i := range 4 {
			r := row[i]
			if i == 3 {
				// Scores of row 3 are (i%3 of offsets 6b+6, 6b+7).
				x0, x1 := float64((b*8+6)%3), float64((b*8+7)%3)
				z := math.Exp(x0) + math.Exp(x1)
				r = []float64{math.Exp(x0) / z, math.Exp(x1) / z}
			}
			want = append(want, r...)
		}
	}
	close(t, "p", res.Outputs["p"], want)
	for i, x := range res.Outputs["p"].Data {
		if math.IsNaN(x) {
			t.Fatalf("p[%d] is NaN", i)
		}
	}
}
