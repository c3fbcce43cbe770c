package interp

import (
	"math"
	"slices"
	"testing"
)

// TestRandomInputsDeterministic checks that the same seed gives the same
// inputs and another seed other ones.
func TestRandomInputsDeterministic(t *testing.T) {
	g := build(t, subst(layerSpec, "dt", "bf16"))
	dims := map[string]int64{"B": 2, "S": 3, "T": 5}
	a, _ := setup(t, g, dims, 1)
	b, _ := setup(t, g, dims, 1)
	c, _ := setup(t, g, dims, 2)
	for name, x := range a {
		if !slices.Equal(x.Data, b[name].Data) {
			t.Fatalf("%s differs between two calls with seed 1", name)
		}
		if name != "pos" && slices.Equal(x.Data, c[name].Data) {
			t.Fatalf("%s is the same for seeds 1 and 2", name)
		}
		if allZero(x.Data) && len(x.Data) > 0 {
			t.Fatalf("%s is all zeros", name)
		}
		for _, v := range x.Data {
			if name != "pos" && RoundBF16(v) != v {
				t.Fatalf("%s holds %g, not a bf16 value", name, v)
			}
		}
	}
	// Params of rank 2 have variance about 1/fan-in; norm weights are near 1.
	w := a["wgu"]
	ss := 0.0
	for _, v := range w.Data {
		ss += v * v
	}
	if v := ss / float64(len(w.Data)) * 20; v < 0.7 || v > 1.3 {
		t.Errorf("wgu variance * fan-in = %g, want about 1", v)
	}
	for _, v := range a["wn1"].Data {
		if v < 0.5 || v > 1.5 {
			t.Errorf("wn1 holds %g, want [0.5, 1.5]", v)
		}
	}
	// Positions follow the contiguous cache.
	for b := range 2 {
		for s := range 3 {
			if p := a["pos"].At(b, s); p != float64(5+s) {
				t.Fatalf("pos[%d,%d] = %g, want %d", b, s, p, 5+s)
			}
		}
	}
}

// TestRandomPagedLayout checks the generated page tables: valid, the first
// sequence T tokens long, the others between 1 and T, distinct shuffled
// pages, room for the appended tokens, and positions after each cache.
func TestRandomPagedLayout(t *testing.T) {
	for _, page := range []int{1, 4, 16} {
		for _, T := range []int64{1, 17, 33} {
			g := build(t, subst(attnSpec, "dims", ", P, N", "extra", pagedExtra, "layout", pagedLayout(page), "score", "causal(s)"))
			dims := map[string]int64{"B": 5, "S": 7, "T": T}
			full, derived, err := DeriveDims(g, dims)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(derived, []string{"N", "P"}) {
				t.Fatalf("derived %v, want [N P]", derived)
			}
			wantN := 5 * ((int(T) + 7 + page - 1) / page)
			if full["N"] != int64(wantN) || full["P"] != int64(wantN+5) {
				t.Fatalf("derived N=%d P=%d, want %d and %d", full["N"], full["P"], wantN, wantN+5)
			}
			in, err := RandomInputs(g, dims, T)
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewPageTable(page, in["kv_indptr"], in["kv_pages"], in["kv_last"])
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Check(int(full["P"])); err != nil {
				t.Fatal(err)
			}
			lens := p.Lens()
			if lens[0] != int(T) {
				t.Errorf("page %d: first sequence holds %d tokens, want T = %d", page, lens[0], T)
			}
			for b, l := range lens {
				if l < 1 || l > int(T) {
					t.Errorf("sequence %d holds %d tokens, want [1, %d]", b, l, T)
				}
			}
			if T == 33 && slices.Equal(lens, []int{33, 33, 33, 33, 33}) {
				t.Errorf("lengths are not mixed: %v", lens)
			}
			if _, err := p.Append(7); err != nil {
				t.Errorf("no room to append: %v", err)
			}
			seen := map[int]bool{}
			for _, x := range p.Indices {
				if seen[x] {
					t.Fatalf("page %d is listed twice in %v", x, p.Indices)
				}
				seen[x] = true
			}
			if slices.IsSorted(p.Indices) && len(p.Indices) > 3 {
				t.Errorf("pages are not shuffled: %v", p.Indices)
			}
			// The pool is random everywhere, unused slots included.
			zeros := 0
			for _, v := range in["kv"].Data {
				if v == 0 {
					zeros++
				}
			}
			if zeros > len(in["kv"].Data)/100 {
				t.Errorf("pool has %d zeros of %d", zeros, len(in["kv"].Data))
			}
		}
	}
}

// TestRandomPositions checks rope positions over paged and cascade caches:
// token s of sequence b sits after all of b's cached tokens.
func TestRandomPositions(t *testing.T) {
	g := build(t, `
layer pos
dim B, S, T, L, P, N
const G = 2, Dh = 4
input  x         : f32[B, S, G, Dh]
input  pos       : i32[B, S]
input  kv_indptr : i32[B + 1]
input  kv_pages  : i32[N]
input  kv_last   : i32[B]
state  prefix    : f32[2, 1, G, L, Dh]
state  kv        : f32[2, B, G, T, Dh] @ paged(page=4, pages=P, indptr=kv_indptr, indices=kv_pages, last=kv_last)
output m         : f32[B, G, L + T + S, Dh]
y      = transpose(rope(x, pos), [0, 2, 1, 3])
K, V   = append(kv, y, y)
pk, pv = split(prefix, [1, 1], axis=0)
m      = concat(reshape(pk, [1, G, L, Dh]), K, axis=2) + concat(reshape(pv, [1, G, L, Dh]), V, axis=2)
`)
	in, full := setup(t, g, map[string]int64{"B": 4, "S": 3, "T": 10, "L": 6}, 9)
	p, _ := NewPageTable(4, in["kv_indptr"], in["kv_pages"], in["kv_last"])
	for b, l := range p.Lens() {
		for s := range 3 {
			if got := in["pos"].At(b, s); got != float64(6+l+s) {
				t.Fatalf("pos[%d,%d] = %g, want L + len + s = %d", b, s, got, 6+l+s)
			}
		}
	}
	res := run(t, g, full, in)
	// Sequence b's new tokens follow the prefix and its cached tokens.
	m, pre := res.Outputs["m"], in["prefix"]
	x := refRope(in["x"].Data, in["pos"].Data, 4, 3, 2, 4, 10000)
	for b, l := range p.Lens() {
		for tok := range 6 + l + 3 {
			for d := range 4 {
				want := 0.0
				switch {
				case tok < 6:
					want = pre.At(0, 0, 1, tok, d) + pre.At(1, 0, 1, tok, d)
				case tok >= 6+l:
					want = 2 * x[((b*3+tok-6-l)*2+1)*4+d]
				default:
					continue
				}
				if got := m.At(b, 1, tok, d); math.Abs(got-want) > 1e-12 {
					t.Fatalf("m[%d,1,%d,%d] = %g, want %g", b, tok, d, got, want)
				}
			}
		}
	}
}
