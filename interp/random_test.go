package interp

import (
	"math"
	"slices"
	"testing"

	"github.com/fuser-dev/fuser/specs/testlayers"
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

// TestRandomPagedLayout checks the generated page tables, which describe
// each sequence after the step's append of S = 7 tokens: valid, the first
// sequence T + S tokens long, the others between S and T + S, mixed,
// distinct shuffled pages, and a pool random everywhere.
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
			if lens[0] != int(T)+7 {
				t.Errorf("page %d: first sequence holds %d tokens after the step, want T + S = %d", page, lens[0], T+7)
			}
			for b, l := range lens {
				if l < 7 || l > int(T)+7 {
					t.Errorf("sequence %d holds %d tokens after the step, want [S, T + S] = [7, %d]", b, l, T+7)
				}
			}
			if T == 33 && slices.Equal(lens, []int{40, 40, 40, 40, 40}) {
				t.Errorf("lengths are not mixed: %v", lens)
			}
			if p.Indptr[5] > len(p.Indices) || len(p.Indices) != wantN {
				t.Errorf("indptr ends at %d, %d indices, want at most N = %d", p.Indptr[5], len(p.Indices), wantN)
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

// readOnlySpec reads a ragged cache without appending to it: its layout's
// lengths are used as they are.
const readOnlySpec = `
layer ro
dim B, T
const G = 2, Dh = 4
input  kv_indptr : i32[B + 1]
state  kv        : f32[2, B, G, T, Dh] @ ragged(indptr=kv_indptr)
output m         : f32[2, B, G, 1, Dh]
m = mean(kv, axis=3)
`

// TestRandomRaggedLayout checks the generated ragged layout: indptr
// describes the buffer after the append of S tokens, so each sequence holds
// between S and T + S rows, the first exactly T + S, and the buffer has
// indptr[B] rows; for a state no append writes (S = 0) between 1 and T rows,
// all of them read (a mean over the tokens divides by len_b).
func TestRandomRaggedLayout(t *testing.T) {
	const T = 20
	for _, S := range []int{0, 7} {
		g := build(t, readOnlySpec)
		dims := map[string]int64{"B": 6, "T": T}
		if S > 0 {
			g = build(t, subst(attnSpec, "dims", "", "extra", "input kv_indptr : i32[B + 1]", "layout", "@ ragged(indptr=kv_indptr)", "score", "causal(s)"))
			dims["S"] = int64(S)
		}
		in, full := setup(t, g, dims, 5)
		indptr := in["kv_indptr"].Data
		lo, hi := max(S, 1), T+S
		var lens []int
		for b := range 6 {
			l := int(indptr[b+1] - indptr[b])
			lens = append(lens, l)
			if l < lo || l > hi {
				t.Errorf("S=%d: sequence %d holds %d rows, want [%d, %d]", S, b, l, lo, hi)
			}
		}
		if lens[0] != hi {
			t.Errorf("S=%d: first sequence holds %d rows, want %d", S, lens[0], hi)
		}
		if slices.Equal(lens, []int{hi, hi, hi, hi, hi, hi}) {
			t.Errorf("S=%d: lengths are not mixed: %v", S, lens)
		}
		buf := in["kv"]
		if n := buf.Shape[2]; n != int(indptr[6]) {
			t.Errorf("S=%d: buffer has %d rows, indptr ends at %d", S, n, int(indptr[6]))
		}
		res := run(t, g, full, in)
		if S > 0 {
			continue
		}
		var want []float64
		for c := range 2 {
			for b := range 6 {
				for gg := range 2 {
					for d := range 4 {
						sum := 0.0
						for r := int(indptr[b]); r < int(indptr[b+1]); r++ {
							sum += buf.At(c, gg, r, d)
						}
						want = append(want, sum/float64(lens[b]))
					}
				}
			}
		}
		close(t, "m", res.Outputs["m"], want)
		if !slices.Equal(res.States["kv"].Data, buf.Data) {
			t.Error("a state that is only read changed")
		}
	}
}

// TestRandomPositions checks rope positions over paged and cascade caches:
// token s of sequence b sits after all of b's cached tokens (the prefix and
// len_b - S of its paged cache, whose table counts the S new tokens).
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
			if got := in["pos"].At(b, s); got != float64(6+l-3+s) {
				t.Fatalf("pos[%d,%d] = %g, want L + len - S + s = %d", b, s, got, 6+l-3+s)
			}
		}
	}
	res := run(t, g, full, in)
	// Sequence b's new tokens follow the prefix and its cached tokens.
	m, pre := res.Outputs["m"], in["prefix"]
	x := refRope(in["x"].Data, in["pos"].Data, 4, 3, 2, 4, 10000)
	for b, l := range p.Lens() {
		for tok := range m.Shape[2] {
			for d := range 4 {
				want := 0.0
				switch {
				case tok < 6:
					want = pre.At(0, 0, 1, tok, d) + pre.At(1, 0, 1, tok, d)
				case tok >= 6+l:
					// Past the sequence: does not exist, holds 0.
				case tok >= 6+l-3:
					want = 2 * x[((b*3+tok-6-(l-3))*2+1)*4+d]
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

// TestRandomFullLengths: with FullLengths every sequence of a paged or
// ragged cache holds T + S tokens; without it only sequence 0 does.
func TestRandomFullLengths(t *testing.T) {
	for _, variant := range []string{"paged", "ragged"} {
		g, err := testlayers.AttnLayer(variant)
		if err != nil {
			t.Fatal(err)
		}
		dims := map[string]int64{"B": 6, "S": 2, "T": 300}
		for _, full := range []bool{false, true} {
			in, err := RandomInputsWith(g, dims, 3, RandomOptions{FullLengths: full})
			if err != nil {
				t.Fatal(err)
			}
			indptr := in["kv_indptr"].Data
			short := 0
			for b := 0; b < 6; b++ {
				n := int(indptr[b+1] - indptr[b]) // ragged: tokens; paged: pages
				want := 302
				if variant == "paged" {
					want = (302 + 15) / 16
					if last := int(in["kv_last"].Data[b]); n > 0 && (n-1)*16+last != 302 {
						short++
						continue
					}
				}
				if n != want {
					short++
				}
			}
			if full && short != 0 || !full && short == 0 {
				t.Errorf("%s FullLengths=%v: %d of 6 sequences shorter than T+S", variant, full, short)
			}
		}
	}
}
