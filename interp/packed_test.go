package interp

import (
	"fmt"
	"testing"

	"github.com/fuser-dev/fuser/ir"
)

// packedSpec is attention over packed prompts of different lengths, each
// appended to its own sequence of a paged or ragged cache ({{layout}}),
// with rope, GQA and a residual O-projection.
const packedSpec = `
layer packed
dim B, N, T{{dims}}
const D = 12, H = 4, G = 2, Dh = 6
input  x         : f32[N, D] @ packed(indptr=qo_indptr)
input  pos       : i32[N] @ packed(indptr=qo_indptr)
input  qo_indptr : i32[B + 1]
{{extra}}
param  wqkv      : f32[D, (H + 2*G)*Dh]
param  wo        : f32[H*Dh, D]
state  kv        : f32[2, B, G, T, Dh] {{layout}}
output y         : f32[N, D]

q0, k0, v0 = split(x @ wqkv, [H*Dh, G*Dh, G*Dh], axis=-1)
q    = transpose(rope(reshape(q0, [N, H, Dh]), pos), [1, 0, 2])
k    = transpose(rope(reshape(k0, [N, G, Dh]), pos), [1, 0, 2])
v    = transpose(reshape(v0, [N, G, Dh]), [1, 0, 2])
K, V = append(kv, k, v)
s    = q @ transpose(K) / sqrt(Dh)
p    = softmax(causal(s), axis=-1)
y    = x + reshape(transpose(p @ V, [1, 0, 2]), [N, H*Dh]) @ wo
`

// paddedSpec is packedSpec for one sequence of S tokens over a contiguous
// cache of T: the oracle each packed sequence is checked against.
const paddedSpec = `
layer padded
dim B, S, T
const D = 12, H = 4, G = 2, Dh = 6
input  x    : f32[B, S, D]
input  pos  : i32[B, S]
param  wqkv : f32[D, (H + 2*G)*Dh]
param  wo   : f32[H*Dh, D]
state  kv   : f32[2, B, G, T, Dh]
output y    : f32[B, S, D]

q0, k0, v0 = split(x @ wqkv, [H*Dh, G*Dh, G*Dh], axis=-1)
q    = transpose(rope(reshape(q0, [B, S, H, Dh]), pos), [0, 2, 1, 3])
k    = transpose(rope(reshape(k0, [B, S, G, Dh]), pos), [0, 2, 1, 3])
v    = transpose(reshape(v0, [B, S, G, Dh]), [0, 2, 1, 3])
K, V = append(kv, k, v)
s    = q @ transpose(K) / sqrt(Dh)
p    = softmax(causal(s), axis=-1)
y    = x + reshape(transpose(p @ V, [0, 2, 1, 3]), [B, S, H*Dh]) @ wo
`

// TestPackedAgainstPerSequence checks a packed step, sequence by sequence,
// against the same layer run on that sequence alone over a contiguous
// cache holding its cached tokens: the output rows of its tokens and its
// whole caches after the append. The draws include empty and one-token
// sequences and cached tokens from 0 to T.
func TestPackedAgainstPerSequence(t *testing.T) {
	layouts := []struct{ name, dims, extra, layout string }{
		{"ragged", "", "input kv_indptr : i32[B + 1]", "@ ragged(indptr=kv_indptr)"},
		{"paged", ", I, P", "input kv_indptr : i32[B + 1]\ninput kv_pages : i32[I]\ninput kv_last : i32[B]", pagedLayout(4)},
	}
	gu := build(t, paddedSpec)
	for _, l := range layouts {
		g := build(t, subst(packedSpec, "dims", l.dims, "extra", l.extra, "layout", l.layout))
		for _, d := range []struct{ B, N, T int64 }{{1, 5, 3}, {3, 1, 4}, {4, 9, 7}, {5, 13, 0}, {6, 11, 5}} {
			t.Run(fmt.Sprintf("%s/B=%d/N=%d/T=%d", l.name, d.B, d.N, d.T), func(t *testing.T) {
				in, full := setup(t, g, map[string]int64{"B": d.B, "N": d.N, "T": d.T}, d.B*100+d.N)
				res := run(t, g, full, in)
				checkPacked(t, g, gu, in, res, lensOf(t, l.name, in))
			})
		}
	}
}

// lensOf returns each sequence's keys after the step from its layout.
func lensOf(t *testing.T, layout string, in map[string]*Tensor) []int {
	t.Helper()
	if layout == "ragged" {
		lens, err := raggedLens(mustInts(t, in["kv_indptr"]))
		if err != nil {
			t.Fatal(err)
		}
		return lens
	}
	p, err := NewPageTable(4, in["kv_indptr"], in["kv_pages"], in["kv_last"])
	if err != nil {
		t.Fatal(err)
	}
	return p.Lens()
}

func mustInts(t *testing.T, x *Tensor) []int {
	t.Helper()
	xs, err := ints(x, "ints")
	if err != nil {
		t.Fatal(err)
	}
	return xs
}

// checkPacked runs the padded layer gu on each sequence of the packed
// step res of g and compares.
func checkPacked(t *testing.T, g, gu *ir.Graph, in map[string]*Tensor, res *Result, lens []int) {
	t.Helper()
	indptr := mustInts(t, in["qo_indptr"])
	B := len(indptr) - 1
	logical := res.Values[g.States[0]]
	K := res.Values[g.AppendOf(g.States[0]).Outs[0]]
	G, T, Dh, D := logical.Shape[2], logical.Shape[3], logical.Shape[4], in["x"].Shape[1]
	TN := K.Shape[2]
	sawEmpty, sawOne := false, false
	for b := range B {
		S := indptr[b+1] - indptr[b]
		sawEmpty, sawOne = sawEmpty || S == 0, sawOne || S == 1
		c := lens[b] - S
		if c < 0 || c > T {
			t.Fatalf("sequence %d: %d keys after appending %d, T = %d", b, lens[b], S, T)
		}
		u := map[string]*Tensor{"wqkv": in["wqkv"], "wo": in["wo"]}
		u["x"] = &Tensor{Shape: []int{1, S, D}, Data: in["x"].Data[indptr[b]*D : indptr[b+1]*D]}
		u["pos"] = &Tensor{Shape: []int{1, S}, Data: in["pos"].Data[indptr[b]:indptr[b+1]]}
		kv := New(2, 1, G, c, Dh)
		for cc := range 2 {
			for gg := range G {
				src := logical.Data[((cc*B+b)*G+gg)*T*Dh:]
				copy(kv.Data[(cc*G+gg)*c*Dh:(cc*G+gg+1)*c*Dh], src[:c*Dh])
			}
		}
		u["kv"] = kv
		want, err := Run(gu, map[string]int64{"B": 1, "S": int64(S), "T": int64(c)}, u, Options{})
		if err != nil {
			t.Fatalf("sequence %d alone: %v", b, err)
		}
		if S > 0 {
			got := &Tensor{Shape: []int{S, D}, Data: res.Outputs["y"].Data[indptr[b]*D : indptr[b+1]*D]}
			close(t, fmt.Sprintf("y of sequence %d", b), got, want.Outputs["y"].Data)
		}
		wk := want.Values[gu.AppendOf(gu.States[0]).Outs[0]]
		for gg := range G {
			got := K.Data[(b*G+gg)*TN*Dh : ((b*G+gg)*TN+lens[b])*Dh]
			if lens[b] > 0 {
				close(t, fmt.Sprintf("K of sequence %d, head %d", b, gg), &Tensor{Shape: []int{lens[b], Dh}, Data: got}, wk.Data[gg*lens[b]*Dh:(gg+1)*lens[b]*Dh])
			}
			for _, x := range K.Data[((b*G+gg)*TN+lens[b])*Dh : (b*G+gg+1)*TN*Dh] {
				if x != 0 {
					t.Fatalf("K of sequence %d, head %d: %g past its %d keys", b, gg, x, lens[b])
				}
			}
		}
	}
	if B >= 2 && !sawEmpty || B >= 3 && len(indptr) > 0 && indptr[B] > 0 && !sawOne {
		t.Fatalf("qo_indptr %v has no empty or no one-token sequence", indptr)
	}
}

// TestPackedIndptrChecked checks that a bad qo_indptr is an error.
func TestPackedIndptrChecked(t *testing.T) {
	g := build(t, subst(packedSpec, "dims", "", "extra", "input kv_indptr : i32[B + 1]", "layout", "@ ragged(indptr=kv_indptr)"))
	dims := map[string]int64{"B": 3, "N": 5, "T": 2}
	for name, ip := range map[string][]float64{
		"not starting at 0": {1, 2, 4, 5},
		"decreasing":        {0, 3, 2, 5},
		"not ending at N":   {0, 1, 2, 4},
	} {
		t.Run(name, func(t *testing.T) {
			in, full := setup(t, g, dims, 7)
			in["qo_indptr"] = &Tensor{Shape: []int{4}, Data: ip}
			if _, err := Run(g, full, in, Options{}); err == nil {
				t.Fatalf("qo_indptr %v: no error", ip)
			}
		})
	}
}

// TestRandomQLens checks RandomOptions.QLens: the indptr is the given
// split's running sum (an empty and a one-token prompt kept), the rope
// positions count from each prompt's cached tokens, and a split of another
// length, total or with a negative count is an error.
func TestRandomQLens(t *testing.T) {
	g := build(t, subst(packedSpec, "dims", "", "extra", "input kv_indptr : i32[B + 1]", "layout", "@ ragged(indptr=kv_indptr)"))
	dims := map[string]int64{"B": 5, "N": 123, "T": 9}
	in, err := RandomInputsWith(g, dims, 3, RandomOptions{QLens: map[string][]int{"qo_indptr": {0, 1, 17, 100, 5}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := in["qo_indptr"].Data, []float64{0, 0, 1, 18, 118, 123}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("qo_indptr %v, want %v", got, want)
	}
	kv, pos := in["kv_indptr"].Data, in["pos"].Data
	for b, first := range []int{1, 18, 118} {
		cached := kv[b+3] - kv[b+2] - (in["qo_indptr"].Data[b+3] - in["qo_indptr"].Data[b+2])
		if pos[first] != cached {
			t.Errorf("prompt %d's first token at position %v, want its %v cached tokens", b+2, pos[first], cached)
		}
	}
	for _, q := range [][]int{{0, 1, 17, 100}, {0, 1, 17, 100, 6}, {-1, 2, 17, 100, 5}} {
		if _, err := RandomInputsWith(g, dims, 3, RandomOptions{QLens: map[string][]int{"qo_indptr": q}}); err == nil {
			t.Errorf("split %v of 123 tokens over 5 prompts: no error", q)
		}
	}
}
