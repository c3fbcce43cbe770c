package cuda

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/internal/golden"
	"github.com/fuser-dev/fuser/plan"
)

// checkFlashModule checks the attention kernels of a generated module: the
// plan's entries (decode: the kernel, then its merge when the launch takes
// two, a cascade's prefix pass then the kernel; prefill: the kernel), the
// other variant's entries, each entry defined once, no header.
func checkFlashModule(t *testing.T, name string, p *plan.Plan, m *Module) {
	t.Helper()
	if strings.Contains(m.Source, "#include") {
		t.Errorf("%s: the source includes a header", name)
	}
	for i, pk := range p.Kernels {
		if pk.Strategy != plan.Attention {
			continue
		}
		k := m.Kernels[i]
		l := pk.Launch
		want := []string{pk.Name}
		switch {
		case l.Variant == plan.VariantDecode && l.PrefixSplits > 0:
			want = []string{pk.Name + prefixSuffix, pk.Name}
		case l.Variant == plan.VariantDecode && l.Launches == 2:
			want = append(want, pk.Name+mergeSuffix)
		}
		if strings.Join(k.Entries, ",") != strings.Join(want, ",") {
			t.Errorf("%s: kernel %s (%s) has entries %v, want %v", name, pk.Name, l, k.Entries, want)
		}
		// A wgmma prefill module has no decode entry (flashAttentionKernel).
		if (len(k.Variants[plan.VariantDecode]) == 0) != (l.Variant == plan.VariantPrefill && l.WGMMA) || len(k.Variants[plan.VariantPrefill]) != 1 {
			t.Errorf("%s: kernel %s has variants %v", name, pk.Name, k.Variants)
		}
		for _, es := range k.Variants {
			for _, e := range es {
				if n := strings.Count(m.Source, " "+e+"("); n != 1 {
					t.Errorf("%s: entry %s is defined %d times", name, e, n)
				}
			}
		}
		if k.Block != l.Block {
			t.Errorf("%s: kernel %s has block %d, its launch %d", name, pk.Name, k.Block, l.Block)
		}
	}
}

// TestFlashGenerateSpecs generates the fused plan of every shipped spec at
// decode (specFlashDims) and prefill (S = 512) dims.
func TestFlashGenerateSpecs(t *testing.T) {
	attention := 0
	for _, c := range specFlashCases(t) {
		m, err := Generate(c.full)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		checkFlashModule(t, c.name, c.full, m)
		attention += len(c.plan.Kernels)
	}
	if attention == 0 {
		t.Error("no spec has an attention kernel")
	}
}

// TestFlashGenerateVariants generates the attention kernel of every test
// variant at every binding.
func TestFlashGenerateVariants(t *testing.T) {
	for _, c := range flashCases(t) {
		m, err := Generate(c.plan)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		checkFlashModule(t, c.name, c.plan, m)
	}
}

// TestFlashWorkspace checks the split-KV workspace: a counter per
// (sequence, kv head, 16-row tile) rounded up to 4, then slots × B × H × S
// rows of Dh + 2 floats at the plan's decode launch, the slots being the
// splits and a cascade's prefix splits; none for prefill.
func TestFlashWorkspace(t *testing.T) {
	for _, c := range specFlashCases(t) {
		if !strings.HasPrefix(c.name, "llama3_8b/") && !strings.HasPrefix(c.name, "cascade/") {
			continue
		}
		m, err := Generate(c.plan)
		if err != nil {
			t.Fatal(err)
		}
		l := c.plan.Kernels[0].Launch
		want := int64(1)
		if slots := l.Splits + l.PrefixSplits; l.Variant == plan.VariantDecode && slots > 1 {
			want = (c.dims["B"]*8*((4*c.dims["S"]+15)/16)+3)/4*4 + slots*c.dims["B"]*32*c.dims["S"]*130
		}
		if !strings.Contains(m.Source, "fz_workspace["+flashItoa(want)+"];") {
			t.Errorf("%s (%s): the workspace is not %d floats", c.name, l, want)
		}
	}
}

func flashItoa(n int64) string { return intLit(n) }

// TestFlashErrors checks that the kernels the tensor-core templates cannot
// make are refused with a reason (Generate then falls back to the CUDA-core
// kernels).
func TestFlashErrors(t *testing.T) {
	for _, tc := range []struct {
		v    flashVariant
		want string
	}{
		{flashVariant{name: "f32", dtype: "f32", h: 2, g: 1, dh: 64, layout: "contiguous", causal: true}, "bf16 or f16"},
		{flashVariant{name: "dh320", dtype: "bf16", h: 2, g: 1, dh: 320, layout: "contiguous", causal: true}, "head dim"},
	} {
		g, err := frontend.Parse(tc.v.name+".fu", tc.v.spec())
		if err != nil {
			t.Fatal(err)
		}
		_, p, _ := planFlash(t, g, map[string]int64{"B": 1, "S": 1, "T": 8})
		if len(p.Kernels) != 1 {
			t.Fatalf("%s: %d attention kernels", tc.v.name, len(p.Kernels))
		}
		k, err := newKgen(p, p.Kernels[0], p.Kernels[0].Launch.Block)
		if err != nil {
			t.Fatal(err)
		}
		_, err = k.flashAttentionKernel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one about %q", tc.v.name, err, tc.want)
		}
	}
}

// TestFlashGolden compares generated attention sources with golden files
// (go test -update to accept a change): the decode attention kernel of the
// Llama-3-8B layer (B = 1, 4096 cached tokens: split-KV, merged in the same
// launch) from the attention templates on, in
// testdata/attention_decode_llama3_8b.cu; and the cascade layer's at B = 64
// (the prefix pass, then the decode kernel over the own keys) from the
// prefix pass's template on, in testdata/attention_decode_cascade.cu. Both
// hold the workspace, the generated context and the entries.
func TestFlashGolden(t *testing.T) {
	for _, g := range []struct{ name, from, file string }{
		{"llama3_8b/B=1,S=1,T=4096", "\n// ---- attention:", "testdata/attention_decode_llama3_8b.cu"},
		{"cascade/B=64,L=1024,S=1,T=4096", "\n// ---- attention: the prefix pass", "testdata/attention_decode_cascade.cu"},
	} {
		found := false
		for _, c := range specFlashCases(t) {
			if c.name != g.name {
				continue
			}
			found = true
			m, err := Generate(c.plan)
			if err != nil {
				t.Fatal(err)
			}
			i := strings.Index(m.Source, g.from)
			if i < 0 {
				t.Fatalf("%s: no %q in the source", g.name, g.from)
			}
			golden.Check(t, g.file, m.Source[i+1:])
		}
		if !found {
			t.Errorf("no %s case", g.name)
		}
	}
}

// TestFlashTensorMapBase checks the base of the decode's tensor map (the
// context's tbase, from which fz_att_bulk_tile measures each tile's rows):
// the cache's buffer when K and V share it, else the lower of the two
// buffers, so that the rows of both lie at whole-row offsets above it; and
// the map parameter the host encodes from the same buffers (codegen.RowMap,
// last in the ABI, taken by value), which a head dim of no whole 128-byte
// lines does not get.
func TestFlashTensorMapBase(t *testing.T) {
	shared := flashVariant{name: "shared", dtype: "bf16", h: 8, g: 2, dh: 128, layout: "contiguous", causal: true}
	separate := func(dh int) string {
		return fmt.Sprintf("layer separate\ndim B, S, T\nconst H = 4, G = 2, Dh = %d\n", dh) +
			"input q : bf16[B, H, S, Dh]\ninput k : bf16[B, G, T, Dh]\ninput v : bf16[B, G, T, Dh]\noutput o : bf16[B, H, S, Dh]\n" +
			"o = softmax(q @ transpose(k) / sqrt(Dh), axis=-1) @ v\n"
	}
	for _, tc := range []struct {
		name, src, want string
		// mapK and mapV name the map's buffers; empty: no map.
		mapK, mapV string
		dh         int64
	}{
		{"shared", shared.spec(), "tbase() const { return (const u16*)p1; }", "kv", "kv", 128},
		{"separate", separate(64), "tbase() const { return (const u16*)p1 < (const u16*)p2 ? (const u16*)p1 : (const u16*)p2; }", "k", "v", 64},
		{"separate80", separate(80), "tbase() const { return (const u16*)p1 < (const u16*)p2 ? (const u16*)p1 : (const u16*)p2; }", "", "", 0},
	} {
		g, err := frontend.Parse(tc.name+".fu", tc.src)
		if err != nil {
			t.Fatal(err)
		}
		_, p, _ := planFlash(t, g, map[string]int64{"B": 1, "S": 1, "T": 40})
		m, err := Generate(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(m.Source, tc.want) {
			i := strings.Index(m.Source, "tbase() const")
			t.Errorf("%s: want %q, the source has %q", tc.name, tc.want, m.Source[max(i, 0):max(i, 0)+120])
		}
		ps := m.Kernels[0].Params
		last := ps[len(ps)-1]
		switch {
		case tc.mapK == "" && last.Map != nil:
			t.Errorf("%s: a map parameter at head dim 80", tc.name)
		case tc.mapK == "":
		case last.Map == nil:
			t.Errorf("%s: the last parameter, %s, is not a map", tc.name, last.Name)
		case last.Map.K.Name != tc.mapK || last.Map.V.Name != tc.mapV || last.Map.Dh != tc.dh:
			t.Errorf("%s: map of %s and %s at head dim %d, want %s, %s, %d", tc.name, last.Map.K.Name, last.Map.V.Name, last.Map.Dh, tc.mapK, tc.mapV, tc.dh)
		case !strings.Contains(m.Source, "const __grid_constant__ fz_tmap "+last.Name+")"),
			!strings.Contains(m.Source, "&"+last.Name+");"):
			t.Errorf("%s: the entries do not take %s by value and pass its address", tc.name, last.Name)
		}
	}
}

// TestRowMapRows checks the kernel's bound on a map's rows (FZ_ATT_TROWS,
// against which fz_att_bulk_tile checks every copy) is the rows the host
// encodes the map with (codegen.RowMapRows).
func TestRowMapRows(t *testing.T) {
	text, err := libraryText(libAttentionBulk)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("\n#define FZ_ATT_TROWS %#x\n", codegen.RowMapRows)
	if !strings.Contains(text, want) {
		t.Errorf("%s does not define %q", libAttentionBulk, strings.TrimSpace(want))
	}
}

// TestFlashPrefillWG checks that a prefill launch that says wgmma
// instantiates fz_att_prefill_wg with the launch's keys a step and stages
// (head dims 64, 128 and 256 of the variants, at a 300-token prefill), and
// that a launch disagreeing with plan.PrefillWGBytes or a head dim the
// template does not take is refused with a reason.
func TestFlashPrefillWG(t *testing.T) {
	for _, tc := range []struct {
		v    flashVariant
		want string
	}{
		{flashVariant{name: "wg64", dtype: "f16", h: 4, g: 4, dh: 64, layout: "contiguous", causal: true}, "fz_att_prefill_wg<64, 128, 3, false>(c);"},
		{flashVariant{name: "wg128", dtype: "bf16", h: 8, g: 2, dh: 128, layout: "paged", page: 16, causal: true}, "fz_att_prefill_wg<128, 128, 3, true>(c);"},
		{flashVariant{name: "wg256", dtype: "bf16", h: 4, g: 2, dh: 256, layout: "contiguous", causal: true, softcap: 30}, "fz_att_prefill_wg<256, 32, 3, true>(c);"},
	} {
		g, err := frontend.Parse(tc.v.name+".fu", tc.v.spec())
		if err != nil {
			t.Fatal(err)
		}
		_, p, _ := planFlash(t, g, map[string]int64{"B": 2, "S": 300, "T": 8})
		if len(p.Kernels) != 1 || !p.Kernels[0].Launch.WGMMA {
			t.Fatalf("%s: want one attention kernel on wgmma, have %d", tc.v.name, len(p.Kernels))
		}
		m, err := Generate(p)
		if err != nil {
			t.Fatalf("%s: %v", tc.v.name, err)
		}
		if !strings.Contains(m.Source, tc.want) {
			t.Errorf("%s: the source does not call %s", tc.v.name, tc.want)
		}
		k := p.Kernels[0]
		good := *k.Launch
		for _, bad := range []func(l *plan.Launch){
			func(l *plan.Launch) { l.Stages = 1 },
			func(l *plan.Launch) { l.SharedBytes = plan.PrefillWGBytes(int64(tc.v.dh), l.Stages) - 1 },
			func(l *plan.Launch) { l.Tile[1] = 48 },
			func(l *plan.Launch) { l.Block = 256 },
		} {
			l := good
			bad(&l)
			k.Launch = &l
			kg, err := newKgen(p, k, l.Block)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := kg.flashAttentionKernel(); err == nil || !strings.Contains(err.Error(), "wgmma prefill launch") {
				t.Errorf("%s: launch %s, tile %v, %d stages in %d bytes: error %v, want a refused wgmma prefill launch", tc.v.name, &l, l.Tile, l.Stages, l.SharedBytes, err)
			}
		}
		k.Launch = &good
	}
	v := flashVariant{name: "wg72", dtype: "bf16", h: 2, g: 1, dh: 72, layout: "contiguous", causal: true}
	g, err := frontend.Parse(v.name+".fu", v.spec())
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := planFlash(t, g, map[string]int64{"B": 1, "S": 300, "T": 8})
	if l := p.Kernels[0].Launch; l.WGMMA {
		t.Fatalf("head dim 72: the launch pass planned the wgmma prefill (%s)", l)
	}
	l := *p.Kernels[0].Launch
	l.WGMMA, l.Block, l.Tile, l.Stages, l.SharedBytes = true, plan.PrefillWGThreads, [2]int64{plan.PrefillWGRows, 128}, 2, 1<<17
	p.Kernels[0].Launch = &l
	kg, err := newKgen(p, p.Kernels[0], l.Block)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kg.flashAttentionKernel(); err == nil || !strings.Contains(err.Error(), "head dims of 64, 128 or 256") {
		t.Errorf("head dim 72 on wgmma: error %v, want one about the head dim", err)
	}
}

// TestFlashKeySequence checks the context's KSEQ, which lets the wgmma
// prefill copy its key tiles by the tensor copy engine: set for one
// contiguous source (whatever the head dim), clear for paged and ragged
// caches, for a cascade's two sources and for keys stored transposed.
func TestFlashKeySequence(t *testing.T) {
	want := map[string]bool{
		"gqa4": true, "mha-f16-dh64": true, "window": true, "softcap-dh256": true, "nomask-dh72": true,
		"paged16": false, "paged1": false, "ragged": false, "dh6-window": false,
		"cascade": false, "cascade-dh256-window": false, "cascade-f16-dh72-ragged": false, "cascade-paged-dh64": false,
		"bias-alibi": true, "bias-f16-dh72-window": true, "bias-softcap-dh256": true,
		"keyst-dh64": false, "keyst-f16-dh64": false, "keyst-dh128": false, "keyst-f16-dh128": false,
		"keyst-dh256": false, "keyst-f16-dh256": false, "keyst-f16-dh72": false,
	}
	seen := map[string]bool{}
	for _, c := range flashCases(t) {
		name := strings.SplitN(c.name, "/", 2)[0]
		w, ok := want[name]
		if !ok {
			t.Errorf("%s: no expectation for the variant", c.name)
			continue
		}
		seen[name] = true
		m, err := Generate(c.plan)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if line := fmt.Sprintf("static constexpr bool KSEQ = %t;", w); !strings.Contains(m.Source, line) {
			t.Errorf("%s: the context does not say %q", c.name, line)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("variant %s was not planned", name)
		}
	}
}
