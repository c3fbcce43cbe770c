package cuda

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
)

// TestGemmWGMMARefusal checks what GemmWGMMA, the launch pass's question,
// answers for GEMMs of 65 rows: nil for a row-major 16-bit weight, and
// the reason for a weight read transposed (K-contiguous), a left operand
// read transposed, and f32 operands; the kernel generator's own choice
// (gemmWGMMA, under a wgmma launch) agrees with it.
func TestGemmWGMMARefusal(t *testing.T) {
	for _, tc := range []struct {
		x, w, mm, dt string
		want         string
	}{
		{"[B, S, 1000]", "[1000, 520]", "x @ w", "bf16", ""},
		{"[B, S, 1000]", "[1000, 520]", "x @ w", "f16", ""},
		{"[B, S, 1000]", "[520, 1000]", "x @ transpose(w, [1, 0])", "bf16", "N axis contiguous"},
		{"[B, 1000, S]", "[1000, 520]", "transpose(x, [0, 2, 1]) @ w", "bf16", "K axis contiguous"},
		{"[B, S, 1000]", "[1000, 520]", "x @ w", "f32", "two bf16 or two f16"},
	} {
		src := "layer mat\ndim B, S\ninput x : DT" + tc.x + "\nparam w : DT" + tc.w + "\noutput y : f32[B, S, 520]\ny = cast(" + tc.mm + ", f32)\n"
		st, k := planGemm(t, strings.ReplaceAll(src, "DT", tc.dt), map[string]int64{"B": 65, "S": 1})
		err := GemmWGMMA(st.Plan, k)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %s: GemmWGMMA says %v, want %q", tc.dt, tc.mm, err, tc.want)
		}
		if !k.Launch.WGMMA {
			continue
		}
		if gm := launchedModel(t, st.Plan, k); gm.gemmWGMMA() != (tc.want == "") {
			t.Errorf("%s %s: the generator's wgmma path %v, GemmWGMMA %v", tc.dt, tc.mm, gm.gemmWGMMA(), err)
		}
	}
}

// planGemm plans the layer src fused for the H200 at dims, without asking
// codegen about its GEMMs, and returns the state and its first kernel.
func planGemm(t *testing.T, src string, dims map[string]int64) (*passes.State, *plan.Kernel) {
	t.Helper()
	g, err := frontend.Parse("mat.fu", src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims, Target: plan.H200})
	if err != nil {
		t.Fatal(err)
	}
	return st, st.Plan.Kernels[0]
}

// launchedModel is gemm kernel k's model under its launch.
func launchedModel(t *testing.T, p *plan.Plan, k *plan.Kernel) *gemmModel {
	t.Helper()
	kg, err := newKgen(p, k, k.Launch.Block)
	if err != nil {
		t.Fatal(err)
	}
	gm, err := kg.gemmModel()
	if err != nil {
		t.Fatal(err)
	}
	return gm
}

// TestTileEpiRowUnroll checks the rows the wgmma GEMM's tile epilogue
// unrolls in the Llama-3-8B prefill at 512 tokens: QKV's RoPE segments
// (q and k) two, their element code bounding the step (tileEpiCode); its
// KV append of v four and gate/up's SwiGLU eight, as their batch of 32
// elements takes (four and eight whole-row steps of 32 lanes); the output
// and down projections' residual adds four.
func TestTileEpiRowUnroll(t *testing.T) {
	file, src, ok := specs.Source("llama3_8b")
	if !ok {
		t.Fatal("no spec llama3_8b")
	}
	g, err := frontend.Parse(file, src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: map[string]int64{"B": 1, "S": 512, "T": 0}, Target: plan.H200})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"k01_gemm_matmul_rope_append": {"2", "2", "4"},
		"k03_gemm_matmul_add":         {"4"},
		"k05_gemm_matmul_silu_mul":    {"8"},
		"k06_gemm_matmul_add":         {"4"},
	}
	re := regexp.MustCompile(`#pragma unroll (\d+)\n\s*for \(int m = `)
	for _, pk := range st.Plan.Kernels {
		w, ok := want[pk.Name]
		if !ok {
			continue
		}
		delete(want, pk.Name)
		_, gen, err := generateKernel(st.Plan, pk)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range re.FindAllStringSubmatch(gen.helpers, -1) {
			got = append(got, m[1])
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s: tile epilogue row unrolls %v, want %v", pk.Name, got, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("kernels not planned: %v", want)
	}
}
