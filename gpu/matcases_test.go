package gpu

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/plan"
)

// TestMatCasesSplit checks what matCases says of its tensor-core GEMM
// cases (more than plan.GemvMaxRows rows) on the H200, fused and unfused:
// the mma.sync tiles where the result's rows are not 16-byte aligned
// (N of 517, 4097 and 17), unsplit; the wgmma GEMM elsewhere, K split over
// clusters of two blocks but in 136x2560, and at 769 rows by 4680 columns
// 133 tiles on 132 blocks, the last round's one tile split.
func TestMatCasesSplit(t *testing.T) {
	seen := 0
	for _, mc := range matCases() {
		if mc.dims["B"]*mc.dims["S"] <= plan.GemvMaxRows {
			continue
		}
		g, err := MatLayer(strings.TrimPrefix(mc.variant, "mat_"))
		if err != nil {
			t.Fatal(err)
		}
		want, wg := int64(2), true
		switch {
		case strings.HasSuffix(mc.variant, "_136x2560"):
			want = 1
		case strings.HasSuffix(mc.variant, "x517"), strings.HasSuffix(mc.variant, "x4097"), strings.HasSuffix(mc.variant, "x17"):
			want, wg = 1, false
		}
		for _, fused := range []bool{true, false} {
			p, err := NewPlan(g, mc.dims, fused)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range p.Plan.Kernels {
				l := k.Launch
				if l.Variant != plan.VariantGemm {
					continue
				}
				seen++
				if !wg {
					if l.WGMMA || l.Splits != 1 || l.Cluster != 0 {
						t.Errorf("%s %v %s: %s, want the mma.sync tiles", mc.variant, mc.dims, k.Name, l)
					}
					continue
				}
				tail := mc.variant == "res_bf16_2600x4680"
				if !l.WGMMA || l.Splits != want || l.Cluster != 2 || l.SplitTail != tail {
					t.Errorf("%s %v %s: %s, want the wgmma GEMM in %d splits, clusters of 2, the last round alone split %v", mc.variant, mc.dims, k.Name, l, want, tail)
				}
				if tail && l.Grid[0] != 132 {
					t.Errorf("%s %s: %s, want 66 clusters of two for its 133 tiles", mc.variant, k.Name, l)
				}
			}
		}
	}
	if seen < 20 {
		t.Errorf("%d tensor-core GEMM launches in the matmul cases, want 20 at least", seen)
	}
}

// TestMatCasesNarrow checks the one-row GEMVs of matCases on the H200,
// fused: narrow tiles where a tile's weight is all in flight at once
// (the tile widths and counts the cases' comment names); split K where
// it is more (K 3000, 4104 and 5000).
func TestMatCasesNarrow(t *testing.T) {
	want := map[string][2]int64{ // tile slots, tiles
		"swiglu_bf16_1000x1000": {16, 125},
		"cast_bf16_777x2056":    {16, 129},
		"res_bf16_1000x4099":    {32, 129},
		"cast_bf16_1001x517":    {16, 33},
		"res_f16_777x260":       {16, 17},
		"rmsres_bf16_1001x517":  {16, 33},
		"lnres_f16_777x260":     {16, 17},
		"zrms_bf16_1001x517":    {16, 33},
	}
	seen := map[string]bool{}
	for _, mc := range matCases() {
		if mc.dims["B"]*mc.dims["S"] != 1 {
			continue
		}
		p := fusedMatPlan(t, mc.variant, mc.dims)
		for _, k := range p.Plan.Kernels {
			l := k.Launch
			if l.Variant != plan.VariantGemv {
				continue
			}
			w, narrow := want[mc.variant]
			switch {
			case narrow && (l.Tile[1] != w[0] || l.Grid[0] != w[1] || l.Splits != 1 || l.WorkspaceFloats != 0):
				t.Errorf("%s %s: %s tile %v, want %d tiles of %d slots, K unsplit", mc.variant, k.Name, l, l.Tile, w[1], w[0])
			case !narrow && (l.Tile[1] != plan.GemvCols || l.Splits < 2):
				t.Errorf("%s %s: %s tile %v, want tiles of %d columns, K split", mc.variant, k.Name, l, l.Tile, plan.GemvCols)
			}
			seen[mc.variant] = true
		}
	}
	for v := range want {
		if !seen[v] {
			t.Errorf("no one-row GEMV of %s in the matmul cases", v)
		}
	}
}

// TestMatCasesNorm checks that the norm cases of matCases plan their norm
// as a row kernel before the GEMV at one row as at three.
func TestMatCasesNorm(t *testing.T) {
	seen := 0
	for _, mc := range matCases() {
		if !strings.HasPrefix(mc.variant, "rmsres") && !strings.HasPrefix(mc.variant, "lnres") && !strings.HasPrefix(mc.variant, "zrms") {
			continue
		}
		seen++
		ks := fusedMatPlan(t, mc.variant, mc.dims).Plan.Kernels
		if len(ks) != 2 || ks[0].Strategy != plan.Row || ks[1].Strategy != plan.Gemm {
			t.Errorf("%s %v: %d kernels; want a row kernel, then a GEMV", mc.variant, mc.dims, len(ks))
		}
	}
	if seen != 7 {
		t.Errorf("%d norm cases, want 7", seen)
	}
}

// fusedMatPlan plans the fused matmul layer variant at dims on the H200.
func fusedMatPlan(t *testing.T, variant string, dims map[string]int64) *Plan {
	t.Helper()
	g, err := MatLayer(variant)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(g, dims, true)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
