package interp

import (
	"math"
	"testing"
)

// TestDecomposedSoftmax checks exp(s - max(s)) / sum(...) against softmax,
// over a contiguous and a paged cache (where max, sum and the division see
// only each sequence's keys).
func TestDecomposedSoftmax(t *testing.T) {
	const body = `
layer dec
dim B, S, T{{dims}}
const H = 4, G = 2, Dh = 8
input  q  : f32[B, H, S, Dh]
input  k  : f32[B, G, S, Dh]
input  v  : f32[B, G, S, Dh]
{{extra}}
state  kv : f32[2, B, G, T, Dh] {{layout}}
output p1 : f32[B, H, S, T + S]
output p2 : f32[B, H, S, T + S]
output mk : f32[B, G, 1, Dh]
K, V = append(kv, k, v)
s  = causal(q @ transpose(K) / sqrt(Dh))
p1 = softmax(s, axis=-1)
e  = exp(s - max(s, axis=-1))
p2 = e / sum(e, axis=-1)
mk = mean(K, axis=2) + 0 * mean(V, axis=2)
`
	for _, c := range []struct{ name, dims, extra, layout string }{
		{"contiguous", "", "", ""},
		{"paged", ", P, N", pagedExtra, pagedLayout(4)},
		{"ragged", "", "input kv_indptr : i32[B + 1]", "@ ragged(indptr=kv_indptr)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := build(t, subst(body, "dims", c.dims, "extra", c.extra, "layout", c.layout))
			in, full := setup(t, g, map[string]int64{"B": 3, "S": 7, "T": 9}, 11)
			res := run(t, g, full, in)
			close(t, "p2", res.Outputs["p2"], res.Outputs["p1"].Data)
			checkRaggedZeros(t, res)
			// Rows sum to 1 over existing keys; keys past a sequence are 0.
			p := res.Outputs["p1"]
			TS := p.Shape[3]
			for r := 0; r < len(p.Data); r += TS {
				sum := 0.0
				for _, x := range p.Data[r : r+TS] {
					sum += x
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Fatalf("row %d sums to %g", r/TS, sum)
				}
			}
			// mean over the ragged token axis divides by each sequence's
			// count after the append: T + S, or the layout's len_b, which
			// counts the S new tokens.
			ap := appendNode(t, g)
			K := res.Values[ap.Outs[0]]
			lens := make([]int, 3)
			for b := range lens {
				lens[b] = 9 + 7
				if c.name != "contiguous" {
					lens[b] = int(res.Values[ap.Outs[0].Ragged.Lens].Data[b])
				}
			}
			if c.name != "contiguous" && lens[0] != 9+7 {
				t.Fatalf("sequence 0 holds %d tokens after the step, want T + S = 16", lens[0])
			}
			var want []float64
			for b := range 3 {
				for gg := range 2 {
					for d := range 8 {
						s := 0.0
						for tok := range lens[b] {
							s += K.At(b, gg, tok, d)
						}
						want = append(want, s/float64(lens[b]))
					}
				}
			}
			close(t, "mk", res.Outputs["mk"], want)
		})
	}
}

// checkRaggedZeros checks that every ragged value holds 0 at the positions
// that do not exist, and counts that some ragged value was checked.
func checkRaggedZeros(t *testing.T, res *Result) {
	t.Helper()
	checked := 0
	for v, x := range res.Values {
		r := v.Ragged
		if r == nil {
			continue
		}
		lens := res.Values[r.Lens].Data
		extra, err := r.Extra.Eval(map[string]int64{"S": 7})
		if err != nil {
			t.Fatal(err)
		}
		st := x.Strides()
		for i, val := range x.Data {
			j := i / st[r.Axis] % x.Shape[r.Axis]
			b := 0
			if r.Batch >= 0 {
				b = i / st[r.Batch] % x.Shape[r.Batch]
			}
			if j >= int(lens[b])+int(extra) {
				if val != 0 {
					t.Fatalf("%s holds %g at non-existing position %d (token %d of sequence %d)", v.Ref(), val, i, j, b)
				}
				checked++
			}
		}
	}
	if len(res.Values) > 0 && checked == 0 && hasRagged(res) {
		t.Fatal("no non-existing position was checked")
	}
}

func hasRagged(res *Result) bool {
	for v := range res.Values {
		if v.Ragged != nil {
			return true
		}
	}
	return false
}
