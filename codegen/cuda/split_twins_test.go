package cuda

import (
	"strings"
	"testing"
)

// deviceSplitText is the device code of the split formulas whose Go twins
// are in plan/split.go, as the generated source must hold it: a change to
// either side fails here until the other follows. plan's TestPrefixSplit
// and TestDecodeSplit check the twins themselves over a grid of shapes
// (the device side needs a GPU to run, which the unit tests have not).
var deviceSplitText = map[string][]string{
	// plan.PrefixSplit.
	"fz_att_psplit": {
		"FZ_DEV i64 fz_att_psplit(i64 npre, i64 slots, i64& chunk) {",
		"  if (npre <= 0 || slots < 2) return 0;",
		"  chunk = CHUNK > 0 ? (i64)CHUNK : fz_max64(((npre + NPS - 1) / NPS + 15) / 16 * 16, PMIN);",
		"  i64 n = (npre + chunk - 1) / chunk;",
		"  if (n > slots - 1) {",
		"    chunk = ((npre + slots - 2) / (slots - 1) + 15) / 16 * 16;",
	},
	// plan.DecodeSplit, in fz_att_splits.
	"fz_att_splits": {
		"  i64 chunk = CHUNK > 0 ? (i64)CHUNK : ((vis + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;",
		"  chunk = fz_max64(chunk, 16);",
		"  i64 nsp = vis > 0 ? (vis + chunk - 1) / chunk : 1;",
		"  if (nsp > 1 && nsp > osl) {",
		"    chunk = osl > 1 ? ((vis + osl - 1) / osl + 15) / 16 * 16 : fz_max64(vis, 16);",
	},
}

// TestSplitTwins checks that a cascade decode module (which instantiates
// both the prefix pass and the decode kernel) holds the device text of the
// split formulas plan/split.go mirrors, and calls fz_att_psplit with the
// plan's prefix split count.
func TestSplitTwins(t *testing.T) {
	checked := false
	for _, c := range specFlashCases(t) {
		if !strings.HasPrefix(c.name, "cascade/") || c.plan.Kernels == nil {
			continue
		}
		var l = c.plan.Kernels[0].Launch
		for _, pk := range c.plan.Kernels {
			if pk.Launch != nil && pk.Launch.PrefixSplits > 0 {
				l = pk.Launch
			}
		}
		if l == nil || l.PrefixSplits == 0 {
			continue
		}
		m, err := Generate(c.plan)
		if err != nil {
			t.Fatal(err)
		}
		for fn, lines := range deviceSplitText {
			for _, line := range lines {
				if !strings.Contains(m.Source, "\n"+line+"\n") {
					t.Errorf("%s: the source of %s lacks the line %q", c.name, fn, line)
				}
			}
		}
		if !strings.Contains(m.Source, "return fz_att_psplit<"+flashItoa(l.SplitKeys)+", "+flashItoa(l.PrefixSplits)+", ") {
			t.Errorf("%s: fz_att_psplit is not instantiated with the plan's %d prefix splits", c.name, l.PrefixSplits)
		}
		checked = true
	}
	if !checked {
		t.Fatal("no cascade case with a prefix pass")
	}
}

// gemvKperText is the device twin of plan.GemvSplitRows, in
// device/gemv.cuh.
const gemvKperText = "FZ_DEV i64 fz_gemv_kper(i64 kv, i64 nsplit) { return ((kv + nsplit - 1) / nsplit + 7) / 8 * 8; }"

// TestGemvSplitTwin checks that the Llama-3-8B layer's GEMV module holds
// the device text of plan.GemvSplitRows and its body splits K with it.
func TestGemvSplitTwin(t *testing.T) {
	c := findConfig(t, "llama3_8b", "fused", 3)
	m, err := Generate(c.plan_)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Source, gemvKperText) {
		t.Errorf("the module lacks the device twin of plan.GemvSplitRows %q", gemvKperText)
	}
	if src := kernelSource(t, m, "k05_gemm_matmul_silu_mul"); !strings.Contains(src, "const i64 kper = fz_gemv_kper(kv, nsplit);") {
		t.Error("the GEMV body does not split K with fz_gemv_kper")
	}
}
