package passes_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen/cuda"
	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
)

// attentionLaunch plans g fused with opt and returns its attention
// kernel's launch and the fusion log.
func attentionLaunch(t *testing.T, g *ir.Graph, opt passes.Options) (*plan.Launch, []passes.Decision) {
	t.Helper()
	st, err := passes.Run(g, passes.Fused, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range st.Plan.Kernels {
		if k.Strategy == plan.Attention {
			return k.Launch, st.Log
		}
	}
	t.Fatal("no attention kernel")
	return nil, nil
}

// TestTargetSizesDecode checks that the launch pass sizes decode attention
// for the target: Llama-3-8B at B=1 T=4096 on the A100's 108 SMs takes
// 108/8 = 13 splits, one block an SM, whose ring holds 4 stages of 4 warps
// (34816 bytes each) and the query tile (4352) in the 163 KiB a block may
// take less the kernel's 8 KiB of static shared memory; the H200 16 splits
// of 6 stages.
func TestTargetSizesDecode(t *testing.T) {
	g := load(t, specs.Default)
	dims := map[string]int64{"B": 1, "S": 1, "T": 4096}
	for _, tt := range []struct {
		target         plan.Target
		splits, stages int64
		smem           int64
	}{
		{plan.A100, 13, 4, 4*34816 + 4352},
		{plan.H200, 16, 6, 213248},
	} {
		l, _ := attentionLaunch(t, g, passes.Options{Dims: dims, Target: tt.target})
		if l.Variant != plan.VariantDecode || l.Splits != tt.splits || l.Stages != tt.stages || l.SharedBytes != tt.smem {
			t.Errorf("%s: %s, %d stages in %d bytes; want %d splits, %d stages in %d bytes", tt.target.Name, l, l.Stages, l.SharedBytes, tt.splits, tt.stages, tt.smem)
		}
	}
}

// TestTargetSizesPrefill checks that a tensor-core prefill issues wgmma on
// the H200 (its ring from plan.PrefillWG: 128-key steps at head dim 128,
// 32-key steps at 256, 3 stages each) and mma.sync on the A100 (its
// static 128×64 tiles, a grid of 128-row query blocks, heads and
// sequences); the wgmma kernel's blocks persist, a block an SM, where a
// round of items spans fewer than prefillPersistBands query-tile bands.
func TestTargetSizesPrefill(t *testing.T) {
	for _, tt := range []struct {
		spec   string
		target plan.Target
		b, s   int64
		want   plan.Launch
	}{
		// 64 heads x sequences a band: a round of 132 items spans 3 bands.
		{specs.Default, plan.H200, 2, 300, plan.Launch{Grid: [3]int64{132, 1, 1}, Block: 384, SharedBytes: 230400, Tile: [2]int64{128, 128}, Stages: 3, WGMMA: true, Persistent: true}},
		// 32: 5 bands, a block an item.
		{specs.Default, plan.H200, 1, 4096, plan.Launch{Grid: [3]int64{32, 32, 1}, Block: 384, SharedBytes: 230400, Tile: [2]int64{128, 128}, Stages: 3, WGMMA: true}},
		// 16 x 2 heads x sequences: a block an item.
		{"gemma2_softcap", plan.H200, 2, 300, plan.Launch{Grid: [3]int64{3, 16, 2}, Block: 384, SharedBytes: 164864, Tile: [2]int64{128, 32}, Stages: 3, WGMMA: true}},
		{specs.Default, plan.H200, 8, 1024, plan.Launch{Grid: [3]int64{132, 1, 1}, Block: 384, SharedBytes: 230400, Tile: [2]int64{128, 128}, Stages: 3, WGMMA: true, Persistent: true}},
		{specs.Default, plan.A100, 2, 300, plan.Launch{Grid: [3]int64{3, 32, 2}, Block: 256, Tile: [2]int64{128, 64}}},
	} {
		dims := map[string]int64{"B": tt.b, "S": tt.s, "T": 0}
		l, _ := attentionLaunch(t, load(t, tt.spec), passes.Options{Dims: dims, Target: tt.target})
		w := tt.want
		if l.Variant != plan.VariantPrefill || l.Grid != w.Grid || l.Block != w.Block || l.SharedBytes != w.SharedBytes || l.Tile != w.Tile || l.Stages != w.Stages || l.WGMMA != w.WGMMA || l.Persistent != w.Persistent {
			t.Errorf("%s on %s at B=%d S=%d: %s, tile %v, %d stages in %d bytes; want grid %v x%d, tile %v, %d stages in %d bytes, wgmma %t, persistent %t",
				tt.spec, tt.target.Name, tt.b, tt.s, l, l.Tile, l.Stages, l.SharedBytes, w.Grid, w.Block, w.Tile, w.Stages, w.SharedBytes, w.WGMMA, w.Persistent)
		}
	}
}

// TestCUDACoreFallbackExplained checks that attention the tensor-core
// kernels cannot take (f32) is planned on CUDA cores, with the variant
// saying so, a partial per split in the workspace, and the reason in the
// fusion log; and that the option forcing the CUDA-core kernels does the
// same for bf16.
func TestCUDACoreFallbackExplained(t *testing.T) {
	const src = `layer att
dim B, S, T
const H = 8, G = 2, Dh = 64
input  q : DT[B, H, S, Dh]
input  k : DT[B, G, T, Dh]
input  v : DT[B, G, T, Dh]
output o : DT[B, H, S, Dh]
o = softmax(q @ transpose(k) / sqrt(Dh), axis=-1) @ v
`
	dims := map[string]int64{"B": 1, "S": 1, "T": 4096}
	for _, tt := range []struct {
		dtype  string
		simt   bool
		reason string
	}{
		{"f32", false, "queries of dtype f32: the tensor-core kernels take bf16 or f16"},
		{"bf16", true, ""},
	} {
		g, err := frontend.Parse("att.fu", strings.ReplaceAll(src, "DT", tt.dtype))
		if err != nil {
			t.Fatal(err)
		}
		l, log := attentionLaunch(t, g, passes.Options{Dims: dims, SIMTAttention: tt.simt})
		if l.Variant != plan.VariantDecodeSIMT || l.SharedBytes != 0 || l.Stages != 0 {
			t.Errorf("%s: %s with %d bytes of dynamic shared memory: want the CUDA-core decode kernel", tt.dtype, l, l.SharedBytes)
		}
		if want := l.Grid[0] * 1 * 2 * 4 * (64 + 2); l.WorkspaceFloats != want {
			t.Errorf("%s: workspace of %d floats, want %d (splits × kv heads × 4 rows × Dh + 2)", tt.dtype, l.WorkspaceFloats, want)
		}
		explained := false
		for _, d := range log {
			if d.Pass == "launch" && !d.Fired && strings.Contains(d.Reason, tt.reason) && strings.Contains(d.Reason, "CUDA-core") {
				explained = true
			}
		}
		if tt.reason != "" && !explained {
			t.Errorf("%s: the CUDA-core fallback is not in the log %v", tt.dtype, log)
		}
	}
}

// TestDependentLaunch checks which kernels are programmatic dependents of
// the kernel before them: on the H200 every kernel of the step but its
// first, and of the load stage (gemma2_softcap folds 1 + w and joins
// sibling weights) every one but its first; on the A100 none.
func TestDependentLaunch(t *testing.T) {
	for _, spec := range []string{specs.Default, "gemma2_softcap"} {
		g := load(t, spec)
		dims := map[string]int64{"B": 1, "S": 1, "T": 4096}
		for _, target := range []plan.Target{plan.H200, plan.A100} {
			st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims, Target: target})
			if err != nil {
				t.Fatal(err)
			}
			first := map[bool]bool{}
			for _, k := range st.Plan.Kernels {
				want := target.DependentLaunch && first[k.Load]
				first[k.Load] = true
				if k.Launch.Dependent != want {
					t.Errorf("%s on %s: kernel %s (load %v) dependent %v, want %v", spec, target.Name, k.Name, k.Load, k.Launch.Dependent, want)
				}
			}
		}
	}
}

// TestSplitGemvResident checks the invariant fz_split_join relies on: the
// splits of a split-K GEMV tile wait for each other, so the whole grid of
// such a launch must be resident at once, at most one block an SM (the
// tensor-core GEMV's ring takes an SM's shared memory). Every spec, fused
// and unfused, at decode batches 1, 16 and 64 on the H200 and the A100;
// and the split counts of Llama-3-8B's projections at B16 on the H200
// (QKV 5, O and down 8, gate/up none), so that the check is not vacuous.
func TestSplitGemvResident(t *testing.T) {
	for _, name := range specs.Names() {
		g := load(t, name)
		for _, b := range []int64{1, 16, 64} {
			dims := map[string]int64{}
			for d, v := range specDims {
				dims[d] = v
			}
			dims["B"], dims["S"], dims["T"] = b, 1, 4096
			for _, target := range []plan.Target{plan.H200, plan.A100} {
				for _, pipe := range [][]passes.Pass{passes.Fused, passes.Unfused} {
					st, err := passes.Run(g, pipe, passes.Options{Dims: dims, Target: target})
					if err != nil {
						t.Fatalf("%s B=%d: %v", name, b, err)
					}
					for _, k := range st.Plan.Kernels {
						l := k.Launch
						if l.Variant != plan.VariantGemv || l.Splits <= 1 {
							continue
						}
						if blocks := l.Grid[0] * l.Grid[1] * l.Grid[2]; blocks > target.SMs || l.Grid[2] != l.Splits {
							t.Errorf("%s B=%d on %s: %s %s: %d blocks on %d SMs", name, b, target.Name, k.Name, l, blocks, target.SMs)
						}
					}
				}
			}
		}
	}
	st, err := passes.Run(load(t, specs.Default), passes.Fused, passes.Options{Dims: map[string]int64{"B": 16, "S": 1, "T": 4096}, Target: plan.H200})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"k01_gemm_matmul_rope_append": 5, "k03_gemm_matmul_add": 8, "k05_gemm_matmul_silu_mul": 1, "k06_gemm_matmul_add": 8}
	for _, k := range st.Plan.Kernels {
		if w, ok := want[k.Name]; ok {
			delete(want, k.Name)
			if k.Launch.Splits != w {
				t.Errorf("%s: %s, want %d splits", k.Name, k.Launch, w)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("kernels not planned: %v", want)
	}
}

// TestGemvTensorCoreLaunch checks the GEMV launches of the Llama-3-8B
// decode step: above one row a unit the tensor-core ring in dynamic shared
// memory, wgmma on the H200 (stages in its canonical layouts, aligned to
// 1024 bytes, seven stages) and mma.sync on the A100 (six); none at one row.
func TestGemvTensorCoreLaunch(t *testing.T) {
	g := load(t, "llama3_8b")
	tests := []struct {
		target plan.Target
		b      int64
		wgmma  bool
		smem   int64
	}{
		{plan.H200, 1, false, 0},
		{plan.H200, 16, true, 7*(32*256*2+64*32*2) + 1024},
		{plan.H200, 64, true, 7*(32*256*2+64*32*2) + 1024},
		{plan.A100, 1, false, 0},
		{plan.A100, 16, false, 6 * (32*256*2 + 64*(32*2+16))},
	}
	for _, tt := range tests {
		st, err := passes.Run(g, passes.Fused, passes.Options{Dims: map[string]int64{"B": tt.b, "S": 1, "T": 4096}, Target: tt.target})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, k := range st.Plan.Kernels {
			l := k.Launch
			if l.Variant != plan.VariantGemv {
				continue
			}
			n++
			if l.WGMMA != tt.wgmma || l.SharedBytes != tt.smem || strings.Contains(l.String(), "wgmma") != tt.wgmma {
				t.Errorf("%s B=%d %s: %s with %d bytes of dynamic shared memory, want wgmma %v and %d bytes", tt.target.Name, tt.b, k.Name, l, l.SharedBytes, tt.wgmma, tt.smem)
			}
		}
		if n != 4 {
			t.Errorf("%s B=%d: %d GEMV launches, want 4", tt.target.Name, tt.b, n)
		}
	}
}

// TestGemmWGLaunch checks the GEMM launches of the Llama-3-8B prefill
// layer: on the H200 the wgmma GEMM (256 threads, four stages of 64
// positions of a 256-column weight tile and 128 rows in dynamic shared
// memory, aligned to 1024 bytes) on a persistent grid of at most one block
// an SM, unsplit in clusters of two where its 128x256 tiles fill the SMs
// (an even count of blocks, at most one a tile), K split over clusters of
// two where they leave SMs idle, or only the last round's tiles split
// (plan.GemmWGSplits); on the A100 the
// mma.sync tiles. The gemms are QKV (K 4096, 6144 columns), O (4096, 4096),
// gate/up (4096, 28672) and down (14336, 4096).
func TestGemmWGLaunch(t *testing.T) {
	g := load(t, "llama3_8b")
	type want struct {
		grid, splits int64
		tail         bool
	}
	for _, tt := range []struct {
		target plan.Target
		s      int64
		want   []want
	}{
		// 768, 512, 3584 and 512 tiles: every SM busy; gate/up's last
		// round of 20 tiles split.
		{plan.H200, 4096, []want{{132, 1, false}, {132, 1, false}, {132, 2, true}, {132, 1, false}}},
		// 96, 64, 448 and 64 tiles: QKV's 96 take 96 SMs once, in two
		// splits they would take 66 clusters twice; gate/up's 448 take
		// three rounds unsplit and its last 52 split (seven rounds of
		// half the K split were slower, as measured).
		{plan.H200, 512, []want{{96, 1, false}, {128, 2, false}, {132, 2, true}, {128, 2, false}}},
		// 24, 16, 112 and 16 tiles: gate/up's 112 take the SMs once
		// unsplit, twice split.
		{plan.H200, 100, []want{{48, 2, false}, {32, 2, false}, {112, 1, false}, {32, 2, false}}},
		{plan.A100, 4096, nil},
	} {
		st, err := passes.Run(g, passes.Fused, passes.Options{Dims: map[string]int64{"B": 1, "S": tt.s, "T": 0}, Target: tt.target})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, k := range st.Plan.Kernels {
			l := k.Launch
			if l.Variant != plan.VariantGemm {
				continue
			}
			n++
			if tt.want == nil {
				if l.WGMMA || l.Block != 384 || l.SharedBytes != 0 || l.Cluster != 0 || l.Splits != 1 {
					t.Errorf("%s S=%d %s: %s, %d bytes of dynamic shared memory: want the mma.sync tiles", tt.target.Name, tt.s, k.Name, l, l.SharedBytes)
				}
				continue
			}
			if n > len(tt.want) {
				continue
			}
			w := tt.want[n-1]
			cluster := max(w.splits, 2)
			if !l.WGMMA || l.Block != 256 || l.Grid != [3]int64{w.grid, 1, 1} || l.Splits != w.splits || l.SplitTail != w.tail || l.Cluster != cluster || l.SharedBytes != 4*(64*256*2+128*64*2)+1024 || l.Stages != 4 || l.Tile != [2]int64{128, 256} {
				t.Errorf("%s S=%d %s: %s, %d bytes, tile %v, %d stages: want the wgmma GEMM, grid %d, %d splits, clusters of %d", tt.target.Name, tt.s, k.Name, l, l.SharedBytes, l.Tile, l.Stages, w.grid, w.splits, cluster)
			}
		}
		if n != 4 {
			t.Errorf("%s S=%d: %d GEMM launches, want 4", tt.target.Name, tt.s, n)
		}
		if tt.s == 512 {
			wantLog(t, st.Log, "launch", true, "k03_gemm_matmul_add: 64 tiles for 132 SMs, K split over clusters of 2 (rounds × an item's positions: unsplit 1 × 4352, two splits 1 × 2739; no split last round)")
			wantLog(t, st.Log, "launch", true, "k05_gemm_matmul_silu_mul: 448 tiles for 132 SMs, K split over clusters of 2 in the last round (rounds × an item's positions: unsplit 4 × 4352, two splits 7 × 2739; split last round 15795)")
		}
	}
}

// wantLog checks that log holds pass's decision reason, fired or not.
func wantLog(t *testing.T, log []passes.Decision, pass string, fired bool, reason string) {
	t.Helper()
	for _, d := range log {
		if d.Pass == pass && d.Reason == reason {
			if d.Fired != fired {
				t.Errorf("%s: %q fired %v, want %v", pass, reason, d.Fired, fired)
			}
			return
		}
	}
	t.Errorf("%s: no decision %q", pass, reason)
}

// TestGemmWGFallbackExplained checks that a GEMM the wgmma GEMM does not
// take (a [N, K] weight read transposed, as PyTorch's Linear stores it) is
// planned as the mma.sync tiles when the passes ask codegen
// (Options.GemmWGMMA), with the reason in the log, and as the wgmma GEMM
// when they do not ask; a row-major weight takes the wgmma GEMM either way.
func TestGemmWGFallbackExplained(t *testing.T) {
	for _, tc := range []struct {
		w, mm string
		ask   bool
		wg    bool
	}{
		{"[2048, 1024]", "x @ transpose(w)", true, false},
		{"[2048, 1024]", "x @ transpose(w)", false, true},
		{"[1024, 2048]", "x @ w", true, true},
	} {
		src := "layer lin\ndim B, S\ninput x : bf16[B, S, 1024]\nparam w : bf16" + tc.w + "\noutput y : bf16[B, S, 2048]\ny = " + tc.mm + "\n"
		g, err := frontend.Parse("lin.fu", src)
		if err != nil {
			t.Fatal(err)
		}
		opt := passes.Options{Dims: map[string]int64{"B": 1, "S": 4096}, Target: plan.H200}
		if tc.ask {
			opt.GemmWGMMA = cuda.GemmWGMMA
		}
		st, err := passes.Run(g, passes.Fused, opt)
		if err != nil {
			t.Fatal(err)
		}
		l := st.Plan.Kernels[0].Launch
		if l.WGMMA != tc.wg || (l.Block == 384) == tc.wg || (l.Cluster == 2) != tc.wg {
			t.Errorf("%s (asked %v): %s, want the wgmma GEMM %v", tc.mm, tc.ask, l, tc.wg)
		}
		logged := false
		for _, d := range st.Log {
			if d.Pass == "launch" && !d.Fired && strings.Contains(d.Reason, "N axis contiguous") && strings.Contains(d.Reason, "mma.sync tiles") {
				logged = true
			}
		}
		if logged != (tc.ask && !tc.wg) {
			t.Errorf("%s (asked %v): the fallback logged %v, log %v", tc.mm, tc.ask, logged, st.Log)
		}
	}
}

// TestGemvNarrowLaunch checks the one-row GEMVs when the passes ask
// codegen for narrow tiles (Options.GemvTiles): where a tile's share of
// the weight is all in flight at once (GPT-2 small at B1 on the H200: QKV
// in 72 tiles of 32 slots, O in 48 of 16, the MLP's up in 96 of 32) the
// narrowest tiles that fit the SMs a block each, K unsplit and no
// partials; where it is more (Llama-3-8B's QKV, O and down, and GPT-2's
// down) K is split, gate/up's 112 tiles of 256 as before. The choice is
// in the log. Where codegen refuses, or is not asked, K is split as well.
func TestGemvNarrowLaunch(t *testing.T) {
	// The QKV GEMV, after the attention norm's row kernel.
	const qkv = "k01_gemm_matmul_rope_append"
	for _, tt := range []struct {
		spec string
		dims map[string]int64
		// want is each kernel's tiles and slots, split its splits.
		want  map[string][2]int64
		split map[string]int64
	}{
		{"gpt2", map[string]int64{"B": 1, "S": 1, "T": 1024},
			map[string][2]int64{"k01_gemm_matmul_add_append": {72, 32}, "k03_gemm_matmul_add": {48, 16}, "k05_gemm_matmul_add_gelu": {96, 32}},
			map[string]int64{"k06_gemm_matmul_add": 43}},
		{specs.Default, map[string]int64{"B": 1, "S": 1, "T": 4096},
			map[string][2]int64{"k05_gemm_matmul_silu_mul": {112, 256}},
			map[string]int64{qkv: 5, "k03_gemm_matmul_add": 8, "k06_gemm_matmul_add": 8}},
	} {
		st, err := passes.Run(load(t, tt.spec), passes.Fused, passes.Options{Dims: tt.dims, Target: plan.H200, GemvTiles: cuda.GemvTiles})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, k := range st.Plan.Kernels {
			l := k.Launch
			if w, ok := tt.want[k.Name]; ok {
				n++
				if l.Variant != plan.VariantGemv || l.Grid != [3]int64{w[0], 1, 1} || l.Tile[1] != w[1] || l.Splits != 1 || l.WorkspaceFloats != 0 {
					t.Errorf("%s %s: %s tile %v, %d partials; want %d tiles of %d slots, unsplit", tt.spec, k.Name, l, l.Tile, l.WorkspaceFloats, w[0], w[1])
				}
				if w[1] < plan.GemvCols {
					wantLog(t, st.Log, "launch", true, fmt.Sprintf("%s: %d GEMV tiles of %d slots, each %d bytes of weight, all in flight at once: K unsplit", k.Name, w[0], w[1], w[1]*768*2))
				}
			}
			if sp, ok := tt.split[k.Name]; ok {
				n++
				if l.Variant != plan.VariantGemv || l.Splits != sp || l.Tile[1] != plan.GemvCols {
					t.Errorf("%s %s: %s tile %v; want %d splits of %d-column tiles", tt.spec, k.Name, l, l.Tile, sp, plan.GemvCols)
				}
				if !slices.ContainsFunc(st.Log, func(d passes.Decision) bool {
					return d.Pass == "launch" && !d.Fired && strings.HasPrefix(d.Reason, k.Name+":") && strings.HasSuffix(d.Reason, "more than a block has in flight; K is split")
				}) {
					t.Errorf("%s %s: no split decision in the log %v", tt.spec, k.Name, st.Log)
				}
			}
		}
		if n != len(tt.want)+len(tt.split) {
			t.Errorf("%s: %d of the GEMVs planned, want %d", tt.spec, n, len(tt.want)+len(tt.split))
		}
	}
	g := load(t, specs.Default)
	dims := map[string]int64{"B": 1, "S": 1, "T": 4096}
	refuse := func(*plan.Plan, *plan.Kernel, int) (int64, error) { return 0, errors.New("refused") }
	for _, tiles := range []func(*plan.Plan, *plan.Kernel, int) (int64, error){nil, refuse} {
		st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims, Target: plan.H200, GemvTiles: tiles})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range st.Plan.Kernels {
			if k.Name == qkv && (k.Launch.Splits != 5 || k.Launch.Tile[1] != plan.GemvCols) {
				t.Errorf("GemvTiles %v: %s %s, want 5 splits of 256-column tiles", tiles != nil, k.Name, k.Launch)
			}
		}
		if tiles != nil {
			wantLog(t, st.Log, "launch", false, qkv+": no narrow GEMV tiles: refused")
		}
	}
}

// TestGemvColsLaunch plans the unfused Llama-3-8B decode step at B1,
// whose scores GEMV (q · Kᵀ over the cache) reads the keys K-contiguous:
// with codegen's tile width (Options.GemvCols) its grid is a block for
// each of the kernel's 32-column tiles, 129 over 4097 keys for each of 8
// kv heads, with no tensor-core ring (none copies such a weight); without
// it, the grid is sized for 256-column tiles as before.
func TestGemvColsLaunch(t *testing.T) {
	g := load(t, specs.Default)
	dims := map[string]int64{"B": 1, "S": 1, "T": 4096}
	for _, cols := range []func(*plan.Plan, *plan.Kernel) (int, error){cuda.GemvCols, nil} {
		st, err := passes.Run(g, passes.Unfused, passes.Options{Dims: dims, GemvCols: cols})
		if err != nil {
			t.Fatal(err)
		}
		var l *plan.Launch
		for _, k := range st.Plan.Kernels {
			if k.Name == "k10_gemm_matmul" {
				l = k.Launch
			}
		}
		want := plan.Launch{Variant: plan.VariantGemv, Grid: [3]int64{129, 8, 1}, Block: 256, Launches: 1, Splits: 1, Tile: [2]int64{4, 32}, Dependent: true}
		if cols == nil {
			want.Grid[0], want.Tile[1], want.WGMMA, want.SharedBytes = 17, plan.GemvCols, true, plan.GemvSharedBytes(4, true)
		}
		if l == nil || *l != want {
			t.Errorf("GemvCols %v: the scores GEMV's launch %+v, want %+v", cols != nil, l, want)
		}
	}
}
