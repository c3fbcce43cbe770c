package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// TestVarlenCost checks the cost of attention over packed queries byte for
// byte against a count made query by query: the model splits the N tokens
// evenly over the B sequences (the first N mod B a token more), sequence b
// holding T cached keys and its own q_b; HBM reads each key some query of
// its sequence sees once (K and V), L2 serves every other read of the
// sequence's query tiles of Tile[0] rows for each query head; a sequence
// without queries reads nothing. FLOPs are 4·Dh per visible (query, key)
// pair and head; the floor reads the caches of the sequences with queries
// once. Causal with and without a window, fewer tokens than sequences, and
// sizes no tile divides.
func TestVarlenCost(t *testing.T) {
	const src = `layer varlen_cost
dim B, N, T
const H = 4, G = 2, Dh = 16
input  q         : bf16[N, H, Dh] @ packed(indptr=qo_indptr)
input  k         : bf16[N, G, Dh] @ packed(indptr=qo_indptr)
input  v         : bf16[N, G, Dh] @ packed(indptr=qo_indptr)
input  qo_indptr : i32[B + 1]
input  kv_indptr : i32[B + 1]
state  kv        : bf16[2, B, G, T, Dh] @ ragged(indptr=kv_indptr)
output o         : bf16[H, N, Dh]
K, V = append(kv, transpose(k, [1, 0, 2]), transpose(v, [1, 0, 2]))
o = softmax(MASK, axis=-1) @ V
`
	const h, g, dh, row = 4, 2, 16, 2 * 16 * 2 // a K and a V row of bf16
	for _, tc := range []struct {
		b, n, t, window int64
	}{
		{3, 300, 50, 0}, {3, 301, 0, 0}, {4, 6, 9, 5}, {5, 3, 7, 0}, {2, 517, 1000, 200},
	} {
		mask := "causal(transpose(q, [1, 0, 2]) @ transpose(K) / 4)"
		if tc.window > 0 {
			mask = fmt.Sprintf("window(transpose(q, [1, 0, 2]) @ transpose(K) / 4, %d)", tc.window)
		}
		dims := map[string]int64{"B": tc.b, "N": tc.n, "T": tc.t}
		st, cs := planCosts(t, strings.Replace(src, "MASK", mask, 1), passes.Options{Dims: dims})
		var c plan.Cost
		var br int64
		for i, k := range st.Plan.Kernels {
			if k.Strategy == plan.Attention {
				c, br = cs[i], k.Launch.Tile[0]
				if k.Launch.Variant != plan.VariantVarlenSIMT || k.Launch.Grid != [3]int64{plan.VarlenItems(tc.n, tc.b, br), h, 1} {
					t.Fatalf("%+v: attention launch %s", tc, k.Launch)
				}
			}
		}
		if br == 0 {
			t.Fatalf("%+v: no attention kernel:\n%s", tc, st.Plan)
		}
		var seen, streamed, pairs, cached int64
		for b := range tc.b {
			qb := tc.n / tc.b
			if b < tc.n%tc.b {
				qb++
			}
			tk := tc.t + qb
			if qb > 0 {
				cached += tk
			}
			sees := func(i, j int64) bool {
				pos := tk - qb + i
				return j <= pos && (tc.window == 0 || j > pos-tc.window)
			}
			any := map[int64]bool{}
			for start := int64(0); start < qb; start += br {
				tile := map[int64]bool{}
				for i := start; i < min(start+br, qb); i++ {
					for j := range tk {
						if sees(i, j) {
							tile[j], any[j] = true, true
							pairs++
						}
					}
				}
				// The tile streams the range its queries see.
				lo, hi := tk, int64(-1)
				for j := range tile {
					lo, hi = min(lo, j), max(hi, j)
				}
				if hi >= lo {
					streamed += (hi - lo + 1) * h * row
				}
			}
			seen += int64(len(any)) * g * row
		}
		ptr := 2 * (tc.b + 1) * 4
		if want := tc.n*h*dh*2 + int64(ptr) + seen; c.BytesRead != want {
			t.Errorf("%+v: read %d bytes, want %d (q, the indptrs, the keys seen)", tc, c.BytesRead, want)
		}
		if want := tc.n * h * dh * 2; c.BytesWritten != want {
			t.Errorf("%+v: wrote %d bytes, want %d (o)", tc, c.BytesWritten, want)
		}
		if want := streamed - seen; c.L2Bytes != want {
			t.Errorf("%+v: L2 served %d bytes, want %d", tc, c.L2Bytes, want)
		}
		if want := 4 * dh * h * pairs; c.Flops != want {
			t.Errorf("%+v: %d FLOPs, want %d", tc, c.Flops, want)
		}
		// The floor: q, k, v, the indptrs and o once, the new keys and
		// values written once, the caches of the sequences with queries
		// read once.
		floor, err := plan.Floor(st.Graph, dims)
		if err != nil {
			t.Fatal(err)
		}
		qo, kv := tc.n*h*dh*2, tc.n*g*dh*2
		if want := 2*qo + 2*kv + int64(ptr) + 2*kv + cached*g*row; floor != want {
			t.Errorf("%+v: floor %d bytes, want %d", tc, floor, want)
		}
	}
}

// TestVarlenCostStateKeys checks varlen attention over keys no append
// writes, K and V the two halves of one state: every sequence has T keys,
// and the kernel reads those its queries see, once, in place of the halves
// its inputs list.
func TestVarlenCostStateKeys(t *testing.T) {
	const src = `layer varlen_state
dim B, N, T
const H = 4, G = 2, Dh = 16
input  q         : bf16[N, H, Dh] @ packed(indptr=qo_indptr)
input  qo_indptr : i32[B + 1]
state  kv        : bf16[2, B, G, T, Dh]
output o         : bf16[H, N, Dh]
k, v = split(kv, [1, 1], axis=0)
o = softmax(causal(transpose(q, [1, 0, 2]) @ transpose(reshape(k, [B, G, T, Dh])) / 4), axis=-1) @ reshape(v, [B, G, T, Dh])
`
	const b, n, tk, h, g, row = 5, 3, 7, 4, 2, 2 * 16 * 2
	_, cs := planCosts(t, src, passes.Options{Dims: map[string]int64{"B": b, "N": n, "T": tk}})
	// Three prompts of one token, two empty: each token sees its
	// sequence's 7 keys.
	seen := int64(3 * g * tk * row)
	if want := int64(n*h*16*2+(b+1)*4) + seen; len(cs) != 1 || cs[0].BytesRead != want {
		t.Fatalf("costs %+v, want one kernel reading %d bytes (q, the indptr, the keys seen)", cs, want)
	}
	if want := int64(3*h*tk*row) - seen; cs[0].L2Bytes != want {
		t.Errorf("L2 served %d bytes, want %d", cs[0].L2Bytes, want)
	}
}
