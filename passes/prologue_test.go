package passes_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/fuser-dev/fuser/codegen/cuda"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
)

// kernelNames lists a plan's kernels by name, with their prologues' op
// counts.
func kernelNames(p *plan.Plan) (names []string, pro []int) {
	for _, k := range p.Kernels {
		names = append(names, k.Name)
		pro = append(pro, len(k.Prologue()))
	}
	return names, pro
}

// TestPrologue plans the Llama-3-8B decode step: at one row each RMSNorm
// is the prologue of the GEMV after it (its 6 ops: x·x, mean, + eps,
// rsqrt, two products), at two rows the tensor-core GEMV keeps the row
// kernels, and where codegen refuses a kernel with its prologue the row
// kernel comes back and the GEMV keeps its epilogue. Gemma-2's row kernel
// of the post-attention norm, residual add and MLP norm is the gate/up
// GEMV's prologue too, the residual sum its other output (6 kernels);
// its last row kernel, after the down projection, has no GEMV after it.
func TestPrologue(t *testing.T) {
	g := load(t, specs.Default)
	one := map[string]int64{"B": 1, "S": 1, "T": 4096}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: one, Check: cuda.Emittable, GemvTiles: cuda.GemvTiles, Prologue: true})
	if err != nil {
		t.Fatal(err)
	}
	names, pro := kernelNames(st.Plan)
	wantNames := []string{"k00_gemm_matmul_rope_append_mul_etc", "k01_attention_attention", "k02_gemm_matmul_add", "k03_gemm_matmul_silu_mul_mean_etc", "k04_gemm_matmul_add"}
	if !slices.Equal(names, wantNames) || !slices.Equal(pro, []int{6, 0, 0, 6, 0}) {
		t.Errorf("kernels %v, prologue ops %v; want %v, [6 0 0 6 0]", names, pro, wantNames)
	}
	wantLog(t, st.Log, "prologue", true, "k01_gemm_matmul_rope_append: row kernel k00_row_mul_mean_add_rsqrt as its prologue, the GEMV computing its left operand")
	wantLog(t, st.Log, "prologue", true, "k05_gemm_matmul_silu_mul: row kernel k04_row_mul_mean_add_rsqrt as its prologue, the GEMV computing its left operand")

	st, err = passes.Run(g, passes.Fused, passes.Options{Dims: map[string]int64{"B": 2, "S": 1, "T": 4096}, Prologue: true})
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := kernelNames(st.Plan); len(names) != 7 {
		t.Errorf("two rows: kernels %v, want 7", names)
	}
	wantLog(t, st.Log, "prologue", false, "k01_gemm_matmul_rope_append: row kernel k00_row_mul_mean_add_rsqrt as its prologue: its rows take the tensor-core GEMV, whose ring copies the operand from memory")

	refuse := func(p *plan.Plan, k *plan.Kernel) error {
		if len(k.Prologue()) > 0 {
			return errors.New("no prologue")
		}
		return cuda.Emittable(p, k)
	}
	st, err = passes.Run(g, passes.Fused, passes.Options{Dims: one, Check: refuse, GemvTiles: cuda.GemvTiles, Prologue: true})
	if err != nil {
		t.Fatal(err)
	}
	names, pro = kernelNames(st.Plan)
	wantNames = []string{"k00_row_mul_mean_add_rsqrt", "k01_gemm_matmul_rope_append", "k02_attention_attention", "k03_gemm_matmul_add", "k04_row_mul_mean_add_rsqrt", "k05_gemm_matmul_silu_mul", "k06_gemm_matmul_add"}
	if !slices.Equal(names, wantNames) || slices.Max(pro) != 0 {
		t.Errorf("refused: kernels %v, prologue ops %v; want %v, none", names, pro, wantNames)
	}
	wantLog(t, st.Log, "prologue", false, "k01_gemm_matmul_rope_append: row kernel k00_row_mul_mean_add_rsqrt as its prologue: codegen refused the kernel with it: no prologue")

	st, err = passes.Run(load(t, "gemma2"), passes.Fused, passes.Options{Dims: one, Check: cuda.Emittable, GemvTiles: cuda.GemvTiles, Prologue: true})
	if err != nil {
		t.Fatal(err)
	}
	wantLog(t, st.Log, "prologue", true, "k07_gemm_matmul_rope_append: row kernel k06_row_mul_mean_add_rsqrt as its prologue, the GEMV computing its left operand")
	wantLog(t, st.Log, "prologue", true, "k11_gemm_matmul_gelu_mul: row kernel k10_row_mul_mean_add_rsqrt as its prologue, the GEMV computing its left operand")
	var outs []string
	for _, k := range st.Plan.Kernels {
		if k.Name == "k09_gemm_matmul_gelu_mul_mean_etc" {
			for _, o := range k.Outputs {
				outs = append(outs, o.Name)
			}
		}
	}
	// Its outputs: the residual sum h1 and its epilogue's gelu(g) · u.
	if names, _ := kernelNames(st.Plan); len(names) != 12 || len(outs) != 2 || outs[0] != "h1" {
		t.Errorf("gemma2: kernels %v (6 of the load stage), the gate/up GEMV's outputs %q; want 12, h1 and the epilogue's", names, outs)
	}

	un, err := passes.Run(g, passes.Unfused, passes.Options{Dims: one})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range un.Plan.Kernels {
		if len(k.Prologue()) > 0 {
			t.Errorf("unfused %s has a prologue", k.Name)
		}
	}
}
