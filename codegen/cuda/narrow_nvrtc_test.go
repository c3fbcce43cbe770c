//go:build nvrtc

package cuda

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// TestNarrowGemvNVRTC plans one-row decode steps as the CLI does (codegen's
// narrow tile counts, plan.GemvNarrowStep) and compiles their fused
// modules for sm_90a: Llama-3-8B and Gemma-2 (every GEMV in 256-column
// tiles, K split where a narrow tile's weight would not all be in
// flight) and GPT-2 small (f16, QKV with its bias and append and the MLP's
// first half with GELU in 32, the output projection's 768 columns in 16,
// each tile's weight all in flight at once). Each narrow GEMV must compile
// without a spill, stream its weight in 16-byte loads, and join no split
// (no arrival counter, no acq_rel add). The norms are row kernels of their
// own: Llama-3-8B's and GPT-2's steps are 7 kernels, Gemma-2's 8 (its
// post-norms before the residual adds keep the output and down
// projections' epilogues bare).
func TestNarrowGemvNVRTC(t *testing.T) {
	for _, tc := range []struct {
		spec string
		dims map[string]int64
		want map[string]int64 // kernel name prefix: tile slots
		step int              // the step's kernels
	}{
		{"llama3_8b", map[string]int64{"B": 1, "S": 1, "T": 4096}, map[string]int64{}, 7},
		{"gpt2", map[string]int64{"B": 1, "S": 1, "T": 1024}, map[string]int64{"k01_": 32, "k03_": 16, "k05_": 32}, 7},
		{"gemma2", map[string]int64{"B": 1, "S": 1, "T": 4096}, map[string]int64{}, 8},
	} {
		g := parseSpec(t, tc.spec)
		full, err := bindDims(g, tc.dims)
		if err != nil {
			t.Fatal(err)
		}
		st, err := passes.Run(g, passes.Fused, passes.Options{Dims: full, Target: plan.H200, Check: Emittable, GemmWGMMA: GemmWGMMA, GemvTiles: GemvTiles})
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		m, err := Generate(st.Plan)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		res, err := compileOnce(m.Source, tc.spec+".cu", plan.H200.Arch)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		for _, k := range res.Kernels {
			if k.Spills() {
				t.Errorf("%s: %s spills (%d bytes stores, %d bytes loads, %d registers)", tc.spec, k.Name, k.SpillStores, k.SpillLoads, k.Registers)
			}
		}
		step := 0
		for _, k := range st.Plan.Kernels {
			if !k.Load {
				step++
			}
		}
		if step != tc.step {
			t.Errorf("%s: %d kernels, want %d", tc.spec, step, tc.step)
		}
		narrow := 0
		for _, k := range st.Plan.Kernels {
			l := k.Launch
			if l == nil || l.Variant != plan.VariantGemv {
				continue
			}
			want := int64(plan.GemvCols)
			for prefix, w := range tc.want {
				if strings.HasPrefix(k.Name, prefix) {
					want = w
				}
			}
			if l.Tile[1] != want || (want < plan.GemvCols && l.Splits != 1) {
				t.Errorf("%s: %s %s tile %v, want %d slots", tc.spec, k.Name, l, l.Tile, want)
			}
			if want == plan.GemvCols {
				continue
			}
			narrow++
			body, ok := ptxEntry(string(res.PTX), k.Name)
			if !ok {
				t.Errorf("%s: no entry %s in the PTX", tc.spec, k.Name)
				continue
			}
			if !strings.Contains(body, "ld.global.nc.L1::no_allocate.L2::256B.v4.u32") {
				t.Errorf("%s: %s has no 16-byte streaming weight load", tc.spec, k.Name)
			}
			if strings.Contains(body, "atom.acq_rel") || strings.Contains(body, "_count") {
				t.Errorf("%s: %s joins splits", tc.spec, k.Name)
			}
		}
		if narrow != len(tc.want) {
			t.Errorf("%s: %d narrow GEMVs, want %d", tc.spec, narrow, len(tc.want))
		}
	}
}
