//go:build nvrtc

package cuda

import (
	"testing"

	"github.com/fuser-dev/fuser/codegen/nvrtc"
	"github.com/fuser-dev/fuser/plan"
)

// TestGemmWGFallbackNVRTC compiles for sm_90a, without spills, GEMMs of 65
// rows whose launch is the wgmma GEMM's, each alone in its module: one the
// wgmma path takes (a row-major weight), with the tensor copy engine's
// stages beside the cp.async ones, and one it does not (a weight read
// transposed, K-contiguous), whose mma.sync tiles stage in the launch's
// ring and whose module must still hold the library that measures it (the
// first full device bundle of this path failed to compile there).
func TestGemmWGFallbackNVRTC(t *testing.T) {
	for _, tc := range []struct {
		w, mm   string
		wg, tma bool
	}{
		{"[1000, 520]", "x @ w", true, true},
		{"[520, 1000]", "x @ transpose(w, [1, 0])", false, false},
	} {
		src := "layer mat\ndim B, S\ninput x : bf16[B, S, 1000]\nparam w : bf16" + tc.w + "\noutput y : f32[B, S, 520]\ny = cast(" + tc.mm + ", f32)\n"
		st, k := planGemm(t, src, map[string]int64{"B": 65, "S": 1})
		if l := k.Launch; l.Variant != plan.VariantGemm || !l.WGMMA {
			t.Fatalf("%s: %s is launched %s, want the wgmma GEMM", tc.mm, k.Name, l)
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
		res, err := nvrtc.Compile(m.Source, "mat.cu", plan.H200.Arch)
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
		}
	}
}
