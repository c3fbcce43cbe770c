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

// checkRaggedState checks the ragged buffer after the step: [2, G, N+B*S,
// Dh], sequence b's old rows then its S new ones from row indptr[b] + b*S.
func checkRaggedState(t *testing.T, in map[string]*Tensor, got *Tensor, S int) {
	t.Helper()
	buf, indptr := in["kv"], in["kv_indptr"].Data
	G, N, Dh := buf.Shape[1], buf.Shape[2], buf.Shape[3]
	B := len(indptr) - 1
	if !got.SameShape([]int{2, G, N + B*S, Dh}) {
		t.Fatalf("buffer after the step has shape %v, want [2 %d %d %d]", got.Shape, G, N+B*S, Dh)
	}
	for c, nw := range []*Tensor{in["k"], in["v"]} {
		for g := range G {
			row := 0
			for b := range B {
				for r := int(indptr[b]); r < int(indptr[b+1]); r++ {
					for d := range Dh {
						if x, w := got.At(c, g, row, d), buf.At(c, g, r, d); x != w {
							t.Fatalf("buffer[%d,%d,%d,%d] = %g, want old row %d: %g", c, g, row, d, x, r, w)
						}
					}
					row++
				}
				for s := range S {
					for d := range Dh {
						if x, w := got.At(c, g, row, d), nw.At(b, g, s, d); x != w {
							t.Fatalf("buffer[%d,%d,%d,%d] = %g, want new token %d of sequence %d: %g", c, g, row, d, x, s, b, w)
						}
					}
					row++
				}
			}
		}
	}
}
