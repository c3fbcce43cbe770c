package gpu

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// varlenLayer is an attention layer over packed prompts of different
// lengths at real head dims (the CUDA-core varlen attention kernel and the
// append of packed tokens): 8 query heads over 2 kv heads, q, k and v
// packed inputs read through transposes, each sequence's new keys and
// values appended to its paged or ragged cache, the output [H, N, Dh].
const varlenLayer = `
layer vl_{{name}}
dim B, N, T{{dims}}
const H = 8, G = 2, Dh = {{dh}}
input  q         : {{dt}}[N, H, Dh] @ packed(indptr=qo_indptr)
input  k         : {{dt}}[N, G, Dh] @ packed(indptr=qo_indptr)
input  v         : {{dt}}[N, G, Dh] @ packed(indptr=qo_indptr)
input  qo_indptr : i32[B + 1]
{{inputs}}
state  kv        : {{dt}}[2, B, G, T, Dh] {{layout}}
output o         : {{dt}}[H, N, Dh]
K, V = append(kv, transpose(k, [1, 0, 2]), transpose(v, [1, 0, 2]))
qh   = transpose(q, [1, 0, 2])
o    = softmax({{score}}, axis=-1) @ V
`

// VarlenLayer builds a varlen attention layer: ragged<dh> (causal, a
// ragged cache), paged<page> (head dim 128), win<dh> (a window of 100
// keys, ragged), sc<dh> (softcap 30, ragged) and f16ragged<dh>.
func VarlenLayer(variant string) (*ir.Graph, error) {
	subs := map[string]string{"name": variant, "dt": "bf16", "dims": "",
		"inputs": "input kv_indptr : i32[B + 1]", "layout": "@ ragged(indptr=kv_indptr)",
		"score": "causal(qh @ transpose(K) / sqrt(Dh))"}
	var dh string
	switch {
	case strings.HasPrefix(variant, "paged"):
		dh = "128"
		subs["dims"] = ", P, I"
		subs["inputs"] = "input kv_indptr : i32[B + 1]\ninput kv_pages : i32[I]\ninput kv_last : i32[B]"
		subs["layout"] = "@ paged(page=" + strings.TrimPrefix(variant, "paged") + ", pages=P, indptr=kv_indptr, indices=kv_pages, last=kv_last)"
	case strings.HasPrefix(variant, "ragged"):
		dh = strings.TrimPrefix(variant, "ragged")
	case strings.HasPrefix(variant, "f16ragged"):
		dh = strings.TrimPrefix(variant, "f16ragged")
		subs["dt"] = "f16"
	case strings.HasPrefix(variant, "win"):
		dh = strings.TrimPrefix(variant, "win")
		subs["score"] = "window(qh @ transpose(K) / sqrt(Dh), 100)"
	case strings.HasPrefix(variant, "sc"):
		dh = strings.TrimPrefix(variant, "sc")
		subs["score"] = "causal(softcap(qh @ transpose(K) / sqrt(Dh), 30))"
	}
	if dh == "" {
		return nil, fmt.Errorf("no varlen attention layer %q", variant)
	}
	subs["dh"] = dh
	return parseTemplate("vl_"+variant+".fu", varlenLayer, subs)
}

// varlenCase is a varlen layer (VarlenLayer, or a testlayers.Varlen layer
// named varlen_<name>) at its dims and split of the tokens (nil: a random
// one, with an empty and a one-token prompt).
type varlenCase struct {
	spec  string
	dims  map[string]int64
	qlens []int
}

// varlenCases are the packed-prompt cases: batches with an empty prompt,
// a one-token one and lengths no 128-query tile divides ({0, 1, 17, 100,
// 5}), prompts past one tile over caches of odd lengths, every prompt a
// single token (decode through the varlen kernel), a single prompt, a
// window crossing the tiles, softcap, f16, head dims 64 and 128, ragged
// and paged caches (pages of 1 and 16); and the whole small layers (the
// QKV matmul appending the packed tokens in its epilogue).
func varlenCases(r func(lo, hi int64) int64) []varlenCase {
	type vc = varlenCase
	mixed := []int{0, 1, 17, 100, 5}
	return []vc{
		{"vl_ragged128", map[string]int64{"B": 5, "N": 123, "T": r(50, 300)}, mixed},
		{"vl_paged16", map[string]int64{"B": 5, "N": 123, "T": r(50, 300)}, mixed},
		{"vl_paged1", map[string]int64{"B": 3, "N": 300, "T": r(10, 100)}, []int{129, 0, 171}},
		{"vl_ragged64", map[string]int64{"B": 4, "N": 700, "T": r(0, 50)}, []int{1, 257, 0, 442}},
		{"vl_ragged128", map[string]int64{"B": 8, "N": 8, "T": r(500, 1500)}, []int{1, 1, 1, 1, 1, 1, 1, 1}},
		{"vl_ragged128", map[string]int64{"B": 1, "N": 1, "T": 0}, []int{1}},
		{"vl_win128", map[string]int64{"B": 3, "N": 450, "T": r(100, 400)}, []int{300, 1, 149}},
		{"vl_sc64", map[string]int64{"B": 6, "N": r(150, 250), "T": r(1, 200)}, nil},
		{"vl_f16ragged128", map[string]int64{"B": 4, "N": r(150, 250), "T": r(1, 200)}, nil},
		{"varlen_small_ragged", map[string]int64{"B": 5, "N": 123, "T": r(1, 60)}, mixed},
		{"varlen_paged_window", map[string]int64{"B": 5, "N": 123, "T": r(1, 60)}, mixed},
		{"varlen_small_ragged", map[string]int64{"B": 3, "N": 3, "T": r(1, 60)}, nil},
	}
}
