package gpu

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/specs"
	"github.com/fuser-dev/fuser/specs/testlayers"
)

// DefaultSeed draws the suite's dims. The bundle (make gpu-bundle) compiles
// the kernels of the cases this seed gives, and the suite on the device
// draws the same cases from it; another seed works too, but its kernels are
// then compiled on the device with nvcc (see Images).
const DefaultSeed = 20261129

// Case is one layer at one set of dims: a spec, shrunk or at full size, or
// one of the attention layers of interp's tests.
type Case struct {
	// Spec is an embedded spec's name, "attn_<variant>" for
	// testlayers.AttnLayers, "dec_<variant>" for DecLayer, "mat_<variant>"
	// for MatLayer, "vl_<variant>" for VarlenLayer or "varlen_<name>" for
	// testlayers.Varlen.
	Spec string
	// Full keeps the spec's model constants; otherwise they are shrunk
	// (testlayers.SmallConsts) so that the CPU reference stays fast.
	Full bool
	Dims map[string]int64
	// Seed seeds interp.RandomInputs.
	Seed int64
	// What says what the case is for: "decode T=1", "long T", ...
	What string
	// File, when set, is the spec file the case runs (SpecCases); Spec is
	// then its name.
	File string
	// QLens, for a layer over packed prompts, splits its N tokens over
	// the B prompts (qo_indptr); nil draws a split (interp.RandomInputs).
	QLens []int
}

// Name is the case's subtest name: spec/small|full/B=2,S=1,T=17, and the
// split of packed prompts when the case sets one (/q=0,1,17).
func (c Case) Name() string {
	size := "small"
	switch {
	case c.File != "":
		size = "file"
	case c.Full:
		size = "full"
	}
	name := c.Spec + "/" + size + "/" + DimsString(c.Dims)
	if c.QLens != nil {
		q := make([]string, len(c.QLens))
		for i, n := range c.QLens {
			q[i] = fmt.Sprint(n)
		}
		name += "/q=" + strings.Join(q, ",")
	}
	return name
}

// Inputs draws the case's inputs for its layer g (interp.RandomInputs
// from its seed, with its split of packed prompts).
func (c Case) Inputs(g *ir.Graph) (map[string]*interp.Tensor, error) {
	var opt interp.RandomOptions
	if c.QLens != nil {
		opt.QLens = map[string][]int{"qo_indptr": c.QLens}
	}
	return interp.RandomInputsWith(g, c.Dims, c.Seed, opt)
}

// DimsString prints dims sorted by name, B first: B=2,S=1,T=17.
func DimsString(dims map[string]int64) string {
	keys := make([]string, 0, len(dims))
	for k := range dims {
		keys = append(keys, k)
	}
	order := map[string]int{"B": 0, "S": 1, "T": 2}
	sort.Slice(keys, func(i, j int) bool {
		oi, iok := order[keys[i]]
		oj, jok := order[keys[j]]
		switch {
		case iok && jok:
			return oi < oj
		case iok != jok:
			return iok
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, dims[k])
	}
	return strings.Join(parts, ",")
}

// Graph parses the case's layer.
func (c Case) Graph() (*ir.Graph, error) {
	if c.File != "" {
		b, err := os.ReadFile(c.File)
		if err != nil {
			return nil, err
		}
		return frontend.Parse(c.File, string(b))
	}
	if v, ok := strings.CutPrefix(c.Spec, "attn_"); ok && !isSpec(c.Spec) {
		return testlayers.AttnLayer(v)
	}
	if v, ok := strings.CutPrefix(c.Spec, "dec_"); ok && !isSpec(c.Spec) {
		return DecLayer(v)
	}
	if v, ok := strings.CutPrefix(c.Spec, "mat_"); ok && !isSpec(c.Spec) {
		return MatLayer(v)
	}
	if v, ok := strings.CutPrefix(c.Spec, "ops_"); ok && !isSpec(c.Spec) {
		return OpsLayer(v)
	}
	if v, ok := strings.CutPrefix(c.Spec, "vl_"); ok && !isSpec(c.Spec) {
		return VarlenLayer(v)
	}
	if v, ok := strings.CutPrefix(c.Spec, "varlen_"); ok && !isSpec(c.Spec) {
		return testlayers.Varlen(v)
	}
	if c.Full {
		file, src, ok := specs.Source(c.Spec)
		if !ok {
			return nil, fmt.Errorf("no spec %s", c.Spec)
		}
		return frontend.Parse(file, src)
	}
	return testlayers.Small(c.Spec)
}

func isSpec(name string) bool {
	_, _, ok := specs.Source(name)
	return ok
}

// decLayer is a bf16 (or f16) decode attention layer at real head dims, the
// tensor-core kernels' (codegen/cuda's fz_att_decode) path: 8 query heads
// over 2 kv heads, q, k and v as inputs, a cache appended to.
const decLayer = `
layer dec_{{name}}
dim B, S, T{{dims}}
const H = 8, G = 2, Dh = {{dh}}
input  q : {{dt}}[B, H, S, Dh]
input  k : {{dt}}[B, G, S, Dh]
input  v : {{dt}}[B, G, S, Dh]
{{inputs}}
{{prefix}}
state  kv : {{dt}}[2, B, G, T, Dh] {{layout}}
output o  : {{dt}}[B, H, S, Dh]
K, V = append(kv, k, v)
{{keys}}
o = softmax({{score}}, axis=-1) @ Vs
`

// keysTLayer is a bf16 (or f16) attention layer over keys stored
// transposed: q as an input, the keys kt [B, G, Dh, T] and values vm
// [B, G, T, Dh] as states no append writes (cross-attention over an
// encoder's keys, written q @ kt).
const keysTLayer = `
layer dec_{{name}}
dim B, S, T
const H = 8, G = 2, Dh = {{dh}}
input  q  : {{dt}}[B, H, S, Dh]
state  kt : {{dt}}[B, G, Dh, T]
state  vm : {{dt}}[B, G, T, Dh]
output o  : {{dt}}[B, H, S, Dh]
o = softmax({{score}}, axis=-1) @ vm
`

// decPages are the page sizes the paged decode layers take.
var decPages = []int{1, 2, 4, 8, 16, 32, 64, 128}

// DecLayer builds a decode attention layer: c<dh> (causal), sc<dh>
// (softcap), win<dh> (sliding window of 1000), ragged<dh>, cascade<dh> (a
// prefix of L tokens the batch shares), cascaderagged<dh> (over a ragged
// cache), cascadewin<dh> (with the window), paged<page> (head dim 128),
// and with a score bias varying along the keys: bias<dh> (one a sequence
// and query, shared by the heads), biassc<dh> (one a head and query,
// shared by the sequences, inside softcap) and alibif16<dh> (f16
// throughout, one a head shared by the sequences and queries, under the
// window); and over keys stored transposed (keysTLayer): keyst<dh> (bf16,
// no mask) and keystf16<dh> (f16, causal).
func DecLayer(variant string) (*ir.Graph, error) {
	subs := map[string]string{"name": variant, "dt": "bf16", "dims": "", "inputs": "", "prefix": "", "layout": "", "keys": "Ks = K\nVs = V", "score": "causal(q @ transpose(Ks) / sqrt(Dh))"}
	var dh string
	src := decLayer
	switch {
	case strings.HasPrefix(variant, "keystf16"):
		dh, src = strings.TrimPrefix(variant, "keystf16"), keysTLayer
		subs["dt"], subs["score"] = "f16", "causal(q @ kt / sqrt(Dh))"
	case strings.HasPrefix(variant, "keyst"):
		dh, src = strings.TrimPrefix(variant, "keyst"), keysTLayer
		subs["score"] = "q @ kt / sqrt(Dh)"

	case strings.HasPrefix(variant, "paged"):
		page := strings.TrimPrefix(variant, "paged")
		dh = "128"
		subs["dims"] = ", P, N"
		subs["inputs"] = "input kv_indptr : i32[B + 1]\ninput kv_pages : i32[N]\ninput kv_last : i32[B]"
		subs["layout"] = "@ paged(page=" + page + ", pages=P, indptr=kv_indptr, indices=kv_pages, last=kv_last)"
	case strings.HasPrefix(variant, "ragged"):
		dh = strings.TrimPrefix(variant, "ragged")
		subs["inputs"] = "input kv_indptr : i32[B + 1]"
		subs["layout"] = "@ ragged(indptr=kv_indptr)"
	case strings.HasPrefix(variant, "cascade"):
		dh = strings.TrimPrefix(variant, "cascade")
		subs["dims"] = ", L"
		subs["prefix"] = "state prefix : bf16[2, 1, G, L, Dh]"
		subs["keys"] = "pk, pv = split(prefix, [1, 1], axis=0)\nKs = concat(reshape(pk, [1, G, L, Dh]), K, axis=2)\nVs = concat(reshape(pv, [1, G, L, Dh]), V, axis=2)"
		if d, ok := strings.CutPrefix(dh, "ragged"); ok {
			dh = d
			subs["inputs"] = "input kv_indptr : i32[B + 1]"
			subs["layout"] = "@ ragged(indptr=kv_indptr)"
		}
		if d, ok := strings.CutPrefix(dh, "win"); ok {
			dh = d
			subs["score"] = "window(q @ transpose(Ks) / sqrt(Dh), 1000)"
		}
	case strings.HasPrefix(variant, "biassc"):
		dh = strings.TrimPrefix(variant, "biassc")
		subs["inputs"] = "input kb : bf16[1, H, S, T + S]"
		subs["score"] = "causal(softcap(q @ transpose(Ks) / sqrt(Dh) + kb, 30))"
	case strings.HasPrefix(variant, "bias"):
		dh = strings.TrimPrefix(variant, "bias")
		subs["inputs"] = "input kb : bf16[B, 1, S, T + S]"
		subs["score"] = "causal(q @ transpose(Ks) / sqrt(Dh) + kb)"
	case strings.HasPrefix(variant, "alibif16"):
		dh = strings.TrimPrefix(variant, "alibif16")
		subs["dt"] = "f16"
		subs["inputs"] = "input ab : f16[H, 1, T + S]"
		subs["score"] = "window(ab + q @ transpose(Ks) / sqrt(Dh), 1000)"
	case strings.HasPrefix(variant, "sc"):
		dh = strings.TrimPrefix(variant, "sc")
		subs["score"] = "causal(softcap(q @ transpose(Ks) / sqrt(Dh), 30))"
	case strings.HasPrefix(variant, "win"):
		dh = strings.TrimPrefix(variant, "win")
		subs["score"] = "window(q @ transpose(Ks) / sqrt(Dh), 1000)"
	case strings.HasPrefix(variant, "c"):
		dh = strings.TrimPrefix(variant, "c")
	}
	if dh == "" {
		return nil, fmt.Errorf("no decode attention layer %q", variant)
	}
	subs["dh"] = dh
	return parseTemplate("dec_"+variant+".fu", src, subs)
}

// parseTemplate parses the layer template src with each {{key}} of subs
// replaced by its text.
func parseTemplate(file, src string, subs map[string]string) (*ir.Graph, error) {
	for k, v := range subs {
		src = strings.ReplaceAll(src, "{{"+k+"}}", v)
	}
	return frontend.Parse(file, src)
}

// decCase is a DecLayer variant at its dims.
type decCase struct {
	variant string
	dims    map[string]int64
}

// decCases are the decode attention cases: contexts of 1, 17, 4097 and
// 100003 keys, batches of mixed lengths (ragged and paged caches draw a
// length per sequence), every page size, 8-warp blocks (contiguous and
// paged), head dims 64, 128 and 256,
// softcap, window and cascade: shared prefixes of 1, 17, 4097 and other
// lengths, at head dims 64 to 256, S = 2, a batch of several row blocks,
// own caches of ragged lengths, a window reaching into the prefix.
func decCases(r func(lo, hi int64) int64) []decCase {
	type dc = decCase
	out := []dc{
		{"c128", map[string]int64{"B": 1, "S": 1, "T": 0}},
		{"c128", map[string]int64{"B": 2, "S": 1, "T": 16}},
		{"c128", map[string]int64{"B": 1, "S": 1, "T": 4096}},
		{"c128", map[string]int64{"B": 1, "S": 1, "T": 100002}},
		{"c128", map[string]int64{"B": 3, "S": 2, "T": r(100, 900)}},
		{"c64", map[string]int64{"B": 2, "S": 1, "T": r(3000, 5000)}},
		{"sc256", map[string]int64{"B": 2, "S": 1, "T": r(3000, 5000)}},
		{"win128", map[string]int64{"B": 2, "S": 1, "T": r(3000, 5000)}},
		{"ragged128", map[string]int64{"B": 5, "S": 1, "T": r(2000, 4000)}},
		{"cascade128", map[string]int64{"B": 4, "S": 1, "T": r(100, 600), "L": r(500, 1500)}},
		{"cascade128", map[string]int64{"B": 3, "S": 2, "T": r(100, 600), "L": 4097}},
		{"cascade128", map[string]int64{"B": 40, "S": 1, "T": r(100, 300), "L": 4097}},
		{"cascade64", map[string]int64{"B": 6, "S": 1, "T": r(100, 600), "L": 17}},
		{"cascade256", map[string]int64{"B": 3, "S": 1, "T": r(100, 600), "L": 1}},
		{"cascaderagged128", map[string]int64{"B": 5, "S": 1, "T": r(200, 1200), "L": r(500, 1500)}},
		{"cascadewin128", map[string]int64{"B": 3, "S": 1, "T": r(100, 600), "L": r(2000, 3000)}},
		// 100 items of over 4096 keys fill the SMs one block each: blocks
		// of 8 warps (passes' wide decode blocks).
		{"c128", map[string]int64{"B": 50, "S": 1, "T": r(4100, 4200)}},
		{"paged16", map[string]int64{"B": 50, "S": 1, "T": r(4100, 4200)}},
	}
	for _, p := range decPages {
		out = append(out, dc{fmt.Sprintf("paged%d", p), map[string]int64{"B": 3, "S": 1, "T": r(200, 3000)}})
	}
	return out
}

// prefillCases are the attention layers of DecLayer at prefill: query
// counts no 128-row block divides, from one block to several (a causal
// diagonal crossing blocks, the last block first), key counts no key step
// divides (the last tile by cp.async, the others by the tensor copy engine
// where the cache is contiguous), head dims 64, 128 and 256, softcap, a
// window that starts past the first keys, ragged and paged caches and a
// cascade's prefix (the wgmma prefill on sm_90a, fz_att_prefill_wg), and
// batches whose blocks persist (plan.Launch.Persistent on 132 SMs).
func prefillCases(r func(lo, hi int64) int64) []decCase {
	type dc = decCase
	return []dc{
		{"c128", map[string]int64{"B": 1, "S": 1000, "T": 0}},
		{"c128", map[string]int64{"B": 2, "S": r(129, 400), "T": r(1, 300)}},
		{"c64", map[string]int64{"B": 2, "S": r(200, 700), "T": r(0, 300)}},
		{"sc256", map[string]int64{"B": 1, "S": r(300, 600), "T": r(1, 200)}},
		{"win128", map[string]int64{"B": 1, "S": r(1500, 2500), "T": 0}},
		{"ragged128", map[string]int64{"B": 3, "S": r(100, 300), "T": r(200, 600)}},
		{"cascade128", map[string]int64{"B": 2, "S": r(100, 300), "T": r(50, 200), "L": r(100, 500)}},
		{"paged16", map[string]int64{"B": 2, "S": r(100, 300), "T": r(100, 400)}},
		// 56 or 64 heads × sequences a band: persistent blocks, most
		// taking two or more (query tile, head, sequence) items.
		{"c128", map[string]int64{"B": 7, "S": r(300, 500), "T": r(0, 100)}},
		{"ragged128", map[string]int64{"B": 8, "S": r(300, 500), "T": r(100, 300)}},
	}
}

// biasCases are the attention layers with a score bias varying along the
// keys (DecLayer's bias, biassc and alibif16; testlayers.BiasLayers take
// the CUDA-core kernel): decode (S = 1, and S = 3 over a group of query
// heads) and prefill, at odd sizes, over bf16 and f16, the bias broadcast
// over heads, sequences or queries.
func biasCases(r func(lo, hi int64) int64) []decCase {
	type dc = decCase
	return []dc{
		{"bias128", map[string]int64{"B": 3, "S": 1, "T": r(100, 900)}},
		{"bias128", map[string]int64{"B": 2, "S": 3, "T": r(100, 900)}},
		{"biassc256", map[string]int64{"B": 2, "S": 1, "T": r(3000, 5000)}},
		{"alibif1664", map[string]int64{"B": 3, "S": 1, "T": r(1500, 3000)}},
		{"bias128", map[string]int64{"B": 2, "S": r(129, 400), "T": r(1, 300)}},
		{"biassc256", map[string]int64{"B": 1, "S": r(200, 400), "T": r(1, 200)}},
		{"alibif1664", map[string]int64{"B": 1, "S": r(1100, 1500), "T": r(1, 300)}},
	}
}

// Cases are the suite's cases, drawn from seed: for every embedded spec,
// shrunk, a decode step over a one-token cache (T=1), a decode step over a
// long cache (T in 1500..3000), a prefill of an odd number of tokens (B·S >
// 16, so the matmuls take the tensor-core GEMM path, M, N and T no tile
// multiples) and a step of a few tokens over a mid-size cache; the
// attention layers (contiguous, window, softcap, paged, ragged, cascade)
// at the first three; the decode attention layers at decode and at
// prefill (prefillCases); and the full-size Llama-3-8B layer at a decode step
// of two rows (tensor-core GEMV) and of one (narrow GEMV tiles, K unsplit)
// and a short prefill (GEMM); last the score-bias attention layers
// (testlayers.BiasLayers at the first three kinds, biasCases), the
// layers over keys stored transposed (keysTCases) and the layers over
// packed prompts of different lengths (varlenCases). Paged and
// ragged caches get a random length per sequence (interp.RandomInputs), so
// batches are ragged.
func Cases(seed int64) []Case {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc0ffee))
	r := func(lo, hi int64) int64 { return lo + rng.Int64N(hi-lo+1) }
	odd := func(lo, hi int64) int64 { return r(lo/2, (hi-1)/2)*2 + 1 }
	kinds := []struct {
		what string
		dims func() map[string]int64
	}{
		{"decode T=1", func() map[string]int64 { return map[string]int64{"B": r(1, 4), "S": 1, "T": 1} }},
		{"decode long T", func() map[string]int64 { return map[string]int64{"B": r(2, 4), "S": 1, "T": r(1500, 3000)} }},
		{"prefill (GEMM)", func() map[string]int64 { return map[string]int64{"B": r(1, 3), "S": odd(17, 45), "T": r(1, 300)} }},
		{"few tokens", func() map[string]int64 { return map[string]int64{"B": r(1, 8), "S": r(2, 3), "T": r(2, 700)} }},
		// one row: the CUDA-core GEMVs, in narrow tiles where a tile's
		// share of the weight is all in flight, else K split
		{"decode one row", func() map[string]int64 { return map[string]int64{"B": 1, "S": 1, "T": r(2, 3000)} }},
	}
	var out []Case
	add := func(spec string, full bool, what string, dims map[string]int64, g *ir.Graph) {
		d := map[string]int64{}
		for _, name := range g.Dims {
			switch n, ok := dims[name]; {
			case ok:
				d[name] = n
			case name == "L":
				d[name] = r(1, 100) // the cascade's shared prefix
			}
			// P and N (page pool, page indices) are derived by interp.DeriveDims.
		}
		out = append(out, Case{Spec: spec, Full: full, Dims: d, Seed: int64(len(out)) + seed, What: what})
	}
	for _, name := range specs.Names() {
		g, err := testlayers.Small(name)
		if err != nil {
			panic(err) // the embedded specs shrink; a test checks it
		}
		for _, k := range kinds {
			add(name, false, k.what, k.dims(), g)
		}
	}
	for _, l := range testlayers.AttnLayers {
		g, err := testlayers.AttnLayer(l.Name)
		if err != nil {
			panic(err)
		}
		for _, k := range kinds[:3] {
			add("attn_"+l.Name, false, k.what, k.dims(), g)
		}
	}
	for _, set := range []struct {
		what  string
		cases []decCase
	}{{"decode attention", decCases(r)}, {"prefill attention", prefillCases(r)}} {
		for _, dc := range set.cases {
			g, err := DecLayer(dc.variant)
			if err != nil {
				panic(err)
			}
			add("dec_"+dc.variant, false, set.what, dc.dims, g)
		}
	}
	for _, mc := range matCases() {
		g, err := MatLayer(mc.variant)
		if err != nil {
			panic(err)
		}
		add("mat_"+mc.variant, false, "matmul and epilogue", mc.dims, g)
	}
	for _, dt := range opsDTypes {
		g, err := OpsLayer(dt)
		if err != nil {
			panic(err)
		}
		add("ops_"+dt, false, "every op", map[string]int64{"B": r(1, 4), "S": odd(3, 9)}, g)
	}
	full, err := Case{Spec: specs.Default, Full: true}.Graph()
	if err != nil {
		panic(err)
	}
	add(specs.Default, true, "full-size decode (GEMV)", map[string]int64{"B": 2, "S": 1, "T": r(4000, 4200)}, full)
	add(specs.Default, true, "full-size one-row decode (split-K GEMVs)", map[string]int64{"B": 1, "S": 1, "T": r(4000, 4200)}, full)
	add(specs.Default, true, "full-size prefill (GEMM)", map[string]int64{"B": 1, "S": odd(17, 25), "T": r(10, 40)}, full)
	// Last, so that the draws of the cases above stay as they were.
	for _, l := range testlayers.BiasLayers {
		g, err := testlayers.AttnLayer(l.Name)
		if err != nil {
			panic(err)
		}
		for _, k := range kinds[:3] {
			add("attn_"+l.Name, false, k.what, k.dims(), g)
		}
	}
	for _, dc := range biasCases(r) {
		g, err := DecLayer(dc.variant)
		if err != nil {
			panic(err)
		}
		add("dec_"+dc.variant, false, "score bias", dc.dims, g)
	}
	for _, dc := range keysTCases(r) {
		g, err := DecLayer(dc.variant)
		if err != nil {
			panic(err)
		}
		add("dec_"+dc.variant, false, "keys stored transposed", dc.dims, g)
	}
	for _, vc := range varlenCases(r) {
		g, err := Case{Spec: vc.spec}.Graph()
		if err != nil {
			panic(err)
		}
		add(vc.spec, false, "packed prompts (varlen)", vc.dims, g)
		out[len(out)-1].QLens = vc.qlens
	}
	return out
}

// keysTCases are the attention layers over keys stored transposed
// (DecLayer's keyst and keystf16; the tensor-core decode and mma.sync
// prefill, which stage a tile of keys as stored, Dh rows of keys): decode
// (S = 1, and S = 3 over a group of query heads) and
// prefill, at odd sizes, bf16 and f16, head dims 64, 128 and 256; the
// causal ones have at least as many keys as queries.
func keysTCases(r func(lo, hi int64) int64) []decCase {
	type dc = decCase
	return []dc{
		{"keyst128", map[string]int64{"B": 3, "S": 1, "T": r(100, 900)}},
		{"keystf1664", map[string]int64{"B": 2, "S": 3, "T": r(1500, 3000)}},
		{"keyst256", map[string]int64{"B": 2, "S": 1, "T": r(3000, 5000)}},
		{"keyst128", map[string]int64{"B": 2, "S": r(129, 400), "T": r(1, 300)}},
		{"keystf16128", map[string]int64{"B": 1, "S": r(129, 400), "T": r(401, 700)}},
		{"keyst64", map[string]int64{"B": 1, "S": r(200, 400), "T": r(1, 200)}},
	}
}
