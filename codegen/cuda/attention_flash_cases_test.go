package cuda

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
)

// flashVariant describes a minimal attention layer: q, k, v inputs, a KV
// cache appended to, and softmax attention with the variant's modifiers.
type flashVariant struct {
	name      string
	dtype     string // bf16 or f16
	h, g, dh  int
	layout    string // contiguous, paged or ragged
	page      int
	causal    bool
	window    int     // sliding window (implies causal)
	softcap   float64 // 0 for none
	cascade   bool    // a shared prefix of L tokens
	scaleBias string  // the scale of q·k, as spec text
	bias      string  // the shape of a score bias of the variant's dtype, added after the scale; empty for none
	// keysT: the keys are a state stored transposed, kt [B, G, Dh, T],
	// and the values vm [B, G, T, Dh] (no append: T keys, the queries
	// the last S of them); the layout is contiguous.
	keysT bool
}

// spec is the variant's layer as spec text.
func (v flashVariant) spec() string {
	var b strings.Builder
	dims := "B, S, T"
	if v.cascade {
		dims += ", L"
	}
	if v.layout == "paged" {
		dims += ", P, N"
	}
	fmt.Fprintf(&b, "layer fa_%s\ndim %s\nconst H = %d, G = %d, Dh = %d\n", strings.ReplaceAll(v.name, "-", "_"), dims, v.h, v.g, v.dh)
	dt := v.dtype
	if v.keysT {
		fmt.Fprintf(&b, "input q : %[1]s[B, H, S, Dh]\nstate kt : %[1]s[B, G, Dh, T]\nstate vm : %[1]s[B, G, T, Dh]\n", dt)
	} else {
		fmt.Fprintf(&b, "input q : %s[B, H, S, Dh]\ninput k : %s[B, G, S, Dh]\ninput v : %s[B, G, S, Dh]\n", dt, dt, dt)
	}
	switch {
	case v.keysT:
	case v.layout == "paged":
		b.WriteString("input kv_indptr : i32[B + 1]\ninput kv_pages : i32[N]\ninput kv_last : i32[B]\n")
		fmt.Fprintf(&b, "state kv : %s[2, B, G, T, Dh] @ paged(page=%d, pages=P, indptr=kv_indptr, indices=kv_pages, last=kv_last)\n", dt, v.page)
	case v.layout == "ragged":
		b.WriteString("input kv_indptr : i32[B + 1]\n")
		fmt.Fprintf(&b, "state kv : %s[2, B, G, T, Dh] @ ragged(indptr=kv_indptr)\n", dt)
	default:
		fmt.Fprintf(&b, "state kv : %s[2, B, G, T, Dh]\n", dt)
	}
	if v.cascade {
		fmt.Fprintf(&b, "state prefix : %s[2, 1, G, L, Dh]\n", dt)
	}
	if v.bias != "" {
		fmt.Fprintf(&b, "input kb : %s%s\n", dt, v.bias)
	}
	fmt.Fprintf(&b, "output o : %s[B, H, S, Dh]\n", dt)
	keys := "transpose(K)"
	if v.keysT {
		keys = "kt"
		b.WriteString("V = vm\n")
	} else {
		b.WriteString("K, V = append(kv, k, v)\n")
	}
	if v.cascade {
		b.WriteString("pk, pv = split(prefix, [1, 1], axis=0)\n")
		b.WriteString("K = concat(reshape(pk, [1, G, L, Dh]), K, axis=2)\nV = concat(reshape(pv, [1, G, L, Dh]), V, axis=2)\n")
	}
	scale := v.scaleBias
	if scale == "" {
		scale = "/ sqrt(Dh)"
	}
	fmt.Fprintf(&b, "s = q @ %s %s\n", keys, scale)
	if v.bias != "" {
		b.WriteString("s = s + kb\n")
	}
	if v.softcap != 0 {
		fmt.Fprintf(&b, "s = softcap(s, %g)\n", v.softcap)
	}
	switch {
	case v.window > 0:
		fmt.Fprintf(&b, "s = window(s, %d)\n", v.window)
	case v.causal:
		b.WriteString("s = causal(s)\n")
	}
	b.WriteString("o = softmax(s, axis=-1) @ V\n")
	return b.String()
}

// flashVariants are the layers the attention tests plan: GQA group sizes
// 1 to 8, head dims 4 to 256 (multiples of 16 and not, even and odd),
// bf16 and f16, the three cache layouts (pages of 1 and 16 tokens), causal,
// sliding-window and unmasked attention, softcap, cascade (over each
// layout, head dims 64 to 256, with a window), and a score bias varying
// along the keys (broadcast over sequences and queries, or over heads and
// queries, or full; under softcap and a window); and keys stored
// transposed at head dims 64, 128, 256 and 72, bf16 and f16 (planned at
// keysTFlashDims).
var flashVariants = []flashVariant{
	{name: "gqa4", dtype: "bf16", h: 8, g: 2, dh: 128, layout: "contiguous", causal: true},
	{name: "mha-f16-dh64", dtype: "f16", h: 4, g: 4, dh: 64, layout: "contiguous", causal: true},
	{name: "paged16", dtype: "bf16", h: 8, g: 2, dh: 64, layout: "paged", page: 16, causal: true},
	{name: "paged1", dtype: "bf16", h: 4, g: 1, dh: 128, layout: "paged", page: 1, causal: true},
	{name: "ragged", dtype: "f16", h: 6, g: 2, dh: 96, layout: "ragged", causal: true},
	{name: "window", dtype: "bf16", h: 8, g: 1, dh: 128, layout: "contiguous", window: 24},
	{name: "softcap-dh256", dtype: "bf16", h: 4, g: 2, dh: 256, layout: "contiguous", causal: true, softcap: 2, scaleBias: "* 0.5"},
	{name: "cascade", dtype: "bf16", h: 8, g: 2, dh: 128, layout: "contiguous", causal: true, cascade: true},
	{name: "cascade-dh256-window", dtype: "bf16", h: 4, g: 2, dh: 256, layout: "contiguous", window: 24, cascade: true},
	{name: "cascade-f16-dh72-ragged", dtype: "f16", h: 6, g: 2, dh: 72, layout: "ragged", causal: true, cascade: true},
	{name: "cascade-paged-dh64", dtype: "bf16", h: 8, g: 1, dh: 64, layout: "paged", page: 16, causal: true, cascade: true},
	{name: "nomask-dh72", dtype: "bf16", h: 2, g: 2, dh: 72, layout: "contiguous"},
	{name: "dh6-window", dtype: "f16", h: 3, g: 1, dh: 6, layout: "paged", page: 16, window: 5, softcap: 3},
	{name: "bias-alibi", dtype: "bf16", h: 8, g: 2, dh: 128, layout: "contiguous", causal: true, bias: "[H, 1, T + S]"},
	{name: "bias-f16-dh72-window", dtype: "f16", h: 6, g: 2, dh: 72, layout: "contiguous", window: 24, bias: "[B, 1, S, T + S]"},
	{name: "bias-softcap-dh256", dtype: "bf16", h: 4, g: 2, dh: 256, layout: "contiguous", causal: true, softcap: 2, scaleBias: "* 0.5", bias: "[B, H, S, T + S]"},
	{name: "keyst-dh64", dtype: "bf16", h: 8, g: 2, dh: 64, layout: "contiguous", causal: true, keysT: true},
	{name: "keyst-f16-dh64", dtype: "f16", h: 4, g: 4, dh: 64, layout: "contiguous", causal: true, keysT: true},
	{name: "keyst-dh128", dtype: "bf16", h: 8, g: 1, dh: 128, layout: "contiguous", window: 24, keysT: true},
	{name: "keyst-f16-dh128", dtype: "f16", h: 8, g: 2, dh: 128, layout: "contiguous", causal: true, bias: "[H, 1, T]", keysT: true},
	{name: "keyst-dh256", dtype: "bf16", h: 4, g: 2, dh: 256, layout: "contiguous", causal: true, softcap: 2, scaleBias: "* 0.5", keysT: true},
	{name: "keyst-f16-dh256", dtype: "f16", h: 4, g: 2, dh: 256, layout: "contiguous", causal: true, keysT: true},
	{name: "keyst-f16-dh72", dtype: "f16", h: 6, g: 2, dh: 72, layout: "contiguous", keysT: true},
}

// flashDims are the bindings the variants are planned at: decode (one
// query, contexts of 1, 17 and 4097 keys, several queries), and prefill.
var flashDims = []map[string]int64{
	{"B": 2, "S": 1, "T": 0, "L": 3},
	{"B": 3, "S": 1, "T": 17, "L": 19},
	{"B": 1, "S": 1, "T": 4096, "L": 33},
	{"B": 2, "S": 3, "T": 40, "L": 7},
	{"B": 2, "S": 77, "T": 0, "L": 5},
	{"B": 1, "S": 300, "T": 37, "L": 70},
}

// keysTFlashDims are the bindings the variants of keys stored transposed
// are planned at (T keys, S of them the queries'): decode over 1, 17, 333
// and 4097 keys, several queries, and prefill, at odd sizes.
var keysTFlashDims = []map[string]int64{
	{"B": 2, "S": 1, "T": 1},
	{"B": 3, "S": 1, "T": 17},
	{"B": 3, "S": 1, "T": 333},
	{"B": 1, "S": 1, "T": 4097},
	{"B": 2, "S": 3, "T": 40},
	{"B": 2, "S": 77, "T": 77},
	{"B": 1, "S": 201, "T": 301},
}

// flashCase is one attention kernel planned at bound dims.
type flashCase struct {
	name  string
	graph *ir.Graph
	dims  map[string]int64
	plan  *plan.Plan // the attention kernel alone
	full  *plan.Plan
}

func flashDimString(d map[string]int64) string {
	var ks []string
	for k := range d {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s=%d", k, d[k]))
	}
	return strings.Join(parts, ",")
}

// planFlash plans g fused at dims (completed as the interpreter derives
// them) for the H200 and returns the plan restricted to its attention
// kernels (none when the layer has none).
func planFlash(t testing.TB, g *ir.Graph, dims map[string]int64) (map[string]int64, *plan.Plan, *plan.Plan) {
	t.Helper()
	return planFlashFor(t, g, dims, plan.H200)
}

// planFlashFor is planFlash for target tg.
func planFlashFor(t testing.TB, g *ir.Graph, dims map[string]int64, tg plan.Target) (map[string]int64, *plan.Plan, *plan.Plan) {
	t.Helper()
	d := map[string]int64{}
	for _, name := range g.Dims {
		if v, ok := dims[name]; ok {
			d[name] = v
		}
	}
	full, _, err := interp.DeriveDims(g, d)
	if err != nil {
		t.Fatalf("%s %s: %v", g.Name, flashDimString(d), err)
	}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: full, Target: tg})
	if err != nil {
		t.Fatalf("%s %s: %v", g.Name, flashDimString(full), err)
	}
	p := *st.Plan
	p.Kernels = nil
	for _, k := range st.Plan.Kernels {
		if k.Strategy == plan.Attention {
			p.Kernels = append(p.Kernels, k)
		}
	}
	return full, &p, st.Plan
}

// flashCases plans every variant at every binding.
func flashCases(t testing.TB) []flashCase {
	var out []flashCase
	for _, v := range flashVariants {
		g, err := frontend.Parse(v.name+".fu", v.spec())
		if err != nil {
			t.Fatalf("%s: %v\n%s", v.name, err, v.spec())
		}
		dims := flashDims
		if v.keysT {
			dims = keysTFlashDims
		}
		for _, d := range dims {
			full, p, fp := planFlash(t, g, d)
			if len(p.Kernels) != 1 {
				t.Fatalf("%s: %d attention kernels", v.name, len(p.Kernels))
			}
			out = append(out, flashCase{name: v.name + "/" + flashDimString(full), graph: g, dims: full, plan: p, full: fp})
		}
	}
	return out
}

// specFlashDims are the bindings the shipped specs are checked at: decode
// at B = 1 and 64 over 4096 cached tokens and at B = 16 over 8192 (one
// split an item: blocks of 8 warps where the items fill the SMs), and a
// 512-token prefill.
var specFlashDims = []map[string]int64{
	{"B": 1, "S": 1, "T": 4096, "L": 1024},
	{"B": 64, "S": 1, "T": 4096, "L": 1024},
	{"B": 16, "S": 1, "T": 8192, "L": 1024},
	{"B": 1, "S": 512, "T": 0, "L": 1024},
}

var (
	specFlashOnce sync.Once
	specFlashMemo []flashCase
)

// specFlashCases plans every shipped spec at specFlashDims (once per test
// binary).
func specFlashCases(t testing.TB) []flashCase {
	specFlashOnce.Do(func() { specFlashMemo = planSpecFlash(t) })
	return specFlashMemo
}

func planSpecFlash(t testing.TB) []flashCase {
	var out []flashCase
	for _, name := range specs.Names() {
		g := parseSpec(t, name)
		for _, d := range specFlashDims {
			full, p, fp := planFlash(t, g, d)
			out = append(out, flashCase{name: name + "/" + flashDimString(full), graph: g, dims: full, plan: p, full: fp})
		}
	}
	return out
}
