package interp

import (
	"fmt"
	"math"
	"testing"
)

// TestAttentionRaggedLayout checks attention over a ragged-layout cache
// against the reference and against per-sequence contiguous runs, and the
// buffer after append row by row.
func TestAttentionRaggedLayout(t *testing.T) {
	gc := build(t, subst(attnSpec, "dims", "", "extra", "", "layout", "", "score", "causal(s)"))
	for _, va := range variants[:4] {
		g := build(t, subst(attnSpec, "dims", "", "extra", "input kv_indptr : i32[B + 1]", "layout", "@ ragged(indptr=kv_indptr)", "score", va.score))
		for _, S := range []int64{1, 7} {
			for _, T := range []int64{1, 6, 33} {
				t.Run(fmt.Sprintf("%s/S=%d/T=%d", va.name, S, T), func(t *testing.T) {
					dims := map[string]int64{"B": 3, "S": S, "T": T}
					in, full := setup(t, g, dims, S*100+T)
					res := run(t, g, full, in)
					o := va.opts
					o.scale = 1 / math.Sqrt(8)
					if o.softcap != 0 {
						o.scale *= 20
					}
					kr := func(c int, nw *Tensor) func(b, g int) [][]float64 {
						return raggedTokens(in["kv"], in["kv_indptr"], nw, c)
					}
					close(t, "o", res.Outputs["o"], refAttention(in["q"], 2, kr(0, in["k"]), kr(1, in["v"]), o))
					if va.name == "causal" {
						checkPerSequence(t, gc, in, res.Outputs["o"], kr(0, in["k"]), kr(1, in["v"]), int(S))
					}
					checkRaggedState(t, in, res.States["kv"], int(S))
				})
			}
		}
	}
}

// checkRaggedState checks the ragged buffer after the step row by row: its
// indptr describes each sequence after the append, so the buffer keeps its
// shape [2, G, N, Dh], the last S rows of each sequence hold its new tokens
// and every other row is unchanged.
func checkRaggedState(t *testing.T, in map[string]*Tensor, got *Tensor, S int) {
	t.Helper()
	buf, indptr := in["kv"], in["kv_indptr"].Data
	G, N, Dh := buf.Shape[1], buf.Shape[2], buf.Shape[3]
	B := len(indptr) - 1
	if !got.SameShape(buf.Shape) {
		t.Fatalf("buffer after the step has shape %v, want [2 %d %d %d]", got.Shape, G, N, Dh)
	}
	for c, nw := range []*Tensor{in["k"], in["v"]} {
		for g := range G {
			for b := range B {
				lo, hi := int(indptr[b]), int(indptr[b+1])
				if hi-lo < S {
					t.Fatalf("sequence %d holds %d rows after the step, fewer than the %d appended", b, hi-lo, S)
				}
				for r := lo; r < hi; r++ {
					for d := range Dh {
						x := got.At(c, g, r, d)
						if s := r - (hi - S); s >= 0 {
							if w := nw.At(b, g, s, d); x != w {
								t.Fatalf("buffer[%d,%d,%d,%d] = %g, want new token %d of sequence %d: %g", c, g, r, d, x, s, b, w)
							}
						} else if w := buf.At(c, g, r, d); x != w {
							t.Fatalf("buffer[%d,%d,%d,%d] = %g, want the old row: %g", c, g, r, d, x, w)
						}
					}
				}
			}
		}
	}
}

// TestStateViewBeforeAppend checks the state's own logical view when the
// step appends to it: the layout's lengths len_b count the S new tokens, but
// the state before the append holds only len_b - S of them, so a mean over
// its token axis divides by len_b - S, while a mean over append's K divides
// by len_b, also after a matmul that keeps the token axis (K @ w).
func TestStateViewBeforeAppend(t *testing.T) {
	const body = `
layer view
dim B, S, T{{dims}}
const G = 2, Dh = 4
input  k  : f32[B, G, S, Dh]
{{extra}}
state  kv : f32[2, B, G, T, Dh] {{layout}}
output m  : f32[2, B, G, 1, Dh]
output n  : f32[B, G, 1, Dh]
output r  : f32[B, G, 1, 3]
param  w  : f32[Dh, 3]
K, V = append(kv, k, k)
r    = mean(K @ w, axis=2)
m    = mean(kv, axis=3)
n    = mean(K, axis=2) + 0 * mean(V, axis=2)
`
	for _, c := range []struct{ name, dims, extra, layout string }{
		{"paged", ", P, N", pagedExtra, pagedLayout(4)},
		{"ragged", "", "input kv_indptr : i32[B + 1]", "@ ragged(indptr=kv_indptr)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := build(t, subst(body, "dims", c.dims, "extra", c.extra, "layout", c.layout))
			in, full := setup(t, g, map[string]int64{"B": 5, "S": 3, "T": 6}, 4)
			res := run(t, g, full, in)
			tokens := func(comp int) func(b, g int) [][]float64 {
				if c.name == "paged" {
					return pagedTokens(in["kv"], in["kv_indptr"], in["kv_pages"], in["kv_last"], in["k"], comp)
				}
				return raggedTokens(in["kv"], in["kv_indptr"], in["k"], comp)
			}
			mean := func(toks [][]float64, d int) float64 {
				if len(toks) == 0 {
					return 0
				}
				s := 0.0
				for _, x := range toks {
					s += x[d]
				}
				return s / float64(len(toks))
			}
			var wantM, wantN, wantR []float64
			for comp := range 2 {
				for b := range 5 {
					for gg := range 2 {
						toks := tokens(comp)(b, gg)
						for d := range 4 {
							wantM = append(wantM, mean(toks[:len(toks)-3], d))
						}
					}
				}
			}
			for b := range 5 {
				for gg := range 2 {
					for d := range 4 {
						wantN = append(wantN, mean(tokens(0)(b, gg), d))
					}
				}
			}
			w := in["w"]
			for b := range 5 {
				for gg := range 2 {
					toks := tokens(0)(b, gg)
					for j := range 3 {
						s := 0.0
						for _, x := range toks {
							for d := range 4 {
								s += x[d] * w.At(d, j)
							}
						}
						wantR = append(wantR, s/float64(len(toks)))
					}
				}
			}
			close(t, "m", res.Outputs["m"], wantM)
			close(t, "r", res.Outputs["r"], wantR)
			close(t, "n", res.Outputs["n"], wantN)
		})
	}
}
