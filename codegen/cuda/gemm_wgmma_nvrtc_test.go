//go:build nvrtc

package cuda

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/plan"
)

// deviceGemmWGWorkText is the device code of the split launch's work
// walk, whose Go twins plan.GemmWGFull and plan.GemmWGWork are checked
// over a grid of launches by plan's TestGemmWGWork: a change to either
// side fails here until the other follows.
var deviceGemmWGWorkText = []string{
	"FZ_DEV i64 fz_gemm_wg_full(i64 nit, i64 blocks, int s, bool tail) {",
	"  if (fz_cluster_blocks() != (u32)s) return nit;",
	"  if (!tail) return 0;",
	"  const i64 last = nit / blocks * blocks;",
	"  return (nit - last) * s > blocks ? nit : last;",
	"FZ_DEV i64 fz_gemm_wg_work(i64 wi, i64 full, int s, int* S) {",
	"  *S = wi < full ? 1 : s;",
	"  return wi < full ? wi : full + (wi - full) / s;",
}

// TestGemmWGFallbackNVRTC compiles for sm_90a, without spills, GEMMs
// whose launch is the wgmma GEMM's, each alone in its module: two the
// wgmma path takes (a row-major weight), with the tensor copy engine's
// stages beside the cp.async ones, their three tiles of 65 rows unsplit
// over K 400 and split in two over K 1000 (plan.GemmWGSplits: the
// cluster's sums added through distributed shared memory), and at 5761
// rows 138 tiles over K 1000, of which the six past the first round are
// split (plan.Launch.SplitTail), the split ones calling the device
// twins of plan.GemmWGFull and GemmWGWork with the launch's mode; and one
// it does not (a weight read transposed, K-contiguous), whose mma.sync
// tiles stage in the launch's ring and whose module must still hold the
// library that measures it (the first full device bundle of this path
// failed to compile there).
func TestGemmWGFallbackNVRTC(t *testing.T) {
	for _, tc := range []struct {
		k, w, mm string
		rows     int64
		wg, tma  bool
		splits   int64
		tail     bool
	}{
		{"400", "[400, 520]", "x @ w", 65, true, true, 1, false},
		{"1000", "[1000, 520]", "x @ w", 65, true, true, 2, false},
		{"1000", "[1000, 520]", "x @ w", 5761, true, true, 2, true},
		{"1000", "[520, 1000]", "x @ transpose(w, [1, 0])", 65, false, false, 2, false},
	} {
		src := "layer mat\ndim B, S\ninput x : bf16[B, S, " + tc.k + "]\nparam w : bf16" + tc.w + "\noutput y : f32[B, S, 520]\ny = cast(" + tc.mm + ", f32)\n"
		st, k := planGemm(t, src, map[string]int64{"B": tc.rows, "S": 1})
		if l := k.Launch; l.Variant != plan.VariantGemm || !l.WGMMA || l.Splits != tc.splits || l.SplitTail != tc.tail || (l.Splits > 1 && l.Cluster != l.Splits) {
			t.Fatalf("%s, K %s, %d rows: %s is launched %s, want the wgmma GEMM in %d splits, the last round alone %v", tc.mm, tc.k, tc.rows, k.Name, l, tc.splits, tc.tail)
		}
		gm := launchedModel(t, st.Plan, k)
		if gm.gemmWGMMA() != tc.wg {
			t.Errorf("%s: the wgmma path %v, want %v", tc.mm, gm.gemmWGMMA(), tc.wg)
		}
		if gm.gemmWGTMA() != tc.tma {
			t.Errorf("%s: the copy engine's stages %v, want %v", tc.mm, gm.gemmWGTMA(), tc.tma)
		}
		m, err := Generate(st.Plan)
		if err != nil {
			t.Fatal(err)
		}
		if red := strings.Contains(m.Source, "fz_gemm_wg_reduce<"); red != (tc.wg && tc.splits > 1) {
			t.Errorf("%s, K %s: the split sums' reduction emitted %v, want %v", tc.mm, tc.k, red, tc.wg && tc.splits > 1)
		}
		if tc.wg && tc.splits > 1 {
			call := fmt.Sprintf("full = fz_gemm_wg_full(nit, blocks, %d, %v);", tc.splits, tc.tail)
			if !strings.Contains(m.Source, call) {
				t.Errorf("%s, K %s, %d rows: the source lacks %q", tc.mm, tc.k, tc.rows, call)
			}
			for _, line := range deviceGemmWGWorkText {
				if !strings.Contains(m.Source, "\n"+line+"\n") {
					t.Errorf("%s, K %s, %d rows: the source lacks the line %q", tc.mm, tc.k, tc.rows, line)
				}
			}
		}
		res, err := compileOnce(m.Source, "mat.cu", plan.H200.Arch)
		if err != nil {
			t.Fatalf("%s: %v", tc.mm, err)
		}
		if len(res.Kernels) == 0 {
			t.Errorf("%s: no ptxas report", tc.mm)
		}
		for _, r := range res.Kernels {
			if r.Spills() {
				t.Errorf("%s: %s spills (%d bytes stores, %d bytes loads)", tc.mm, r.Name, r.SpillStores, r.SpillLoads)
			}
			if r.Serialized {
				t.Errorf("%s: ptxas serialized the wgmmas of %s", tc.mm, r.Name)
			}
		}
	}
}
