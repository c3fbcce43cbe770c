//go:build nvrtc

package cuda

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// TestNarrowGemvNVRTC plans one-row decode steps as the CLI does (codegen's
// narrow tile counts, plan.GemvNarrowStep) and compiles their fused
// modules for sm_90a: Llama-3-8B and Gemma-2 (every GEMV in 256-column
// tiles, K split where a narrow tile's weight would not all be in
// flight) and GPT-2 small (f16, QKV with its bias and append and the MLP's
// first half with GELU in 32, the output projection's 768 columns in 16,
// each tile's weight all in flight at once). Each narrow GEMV must compile without a
// spill, stream its weight in 16-byte loads, and join no split (no
// arrival counter, no acq_rel add). The GEMVs after the norms (Llama's
// RMSNorms, GPT-2's LayerNorms) compute them as their prologues: the
// steps are 5 kernels, and those GEMVs stage no operand from memory
// (codegen took the prologues, or the plan would have kept the norms'
// row kernels); each prefetches its norm's params into L2 before it
// waits for the kernel before it. Gemma-2 (its norm weights folded into
// 1 + w at load) is 6 kernels: the row kernel of its post-attention norm,
// residual add and MLP norm is the gate/up GEMV's prologue, whose lead
// block stores the residual sum.
func TestNarrowGemvNVRTC(t *testing.T) {
	for _, tc := range []struct {
		spec string
		dims map[string]int64
		want map[string]int64 // kernel name prefix: tile slots
		pro  []string         // the kernels with a prologue
		step int              // the step's kernels
	}{
		{"llama3_8b", map[string]int64{"B": 1, "S": 1, "T": 4096}, map[string]int64{}, []string{"k00_gemm_matmul_rope_append_mul_etc", "k03_gemm_matmul_silu_mul_mean_etc"}, 5},
		{"gpt2", map[string]int64{"B": 1, "S": 1, "T": 1024}, map[string]int64{"k00_": 32, "k02_": 16, "k03_": 32}, []string{"k00_gemm_matmul_add_append_mean_etc", "k03_gemm_matmul_add_gelu_mean_etc"}, 5},
		{"gemma2", map[string]int64{"B": 1, "S": 1, "T": 4096}, map[string]int64{}, []string{"k06_gemm_matmul_rope_append_mul_etc", "k09_gemm_matmul_gelu_mul_mean_etc"}, 6},
	} {
		g := parseSpec(t, tc.spec)
		full, err := bindDims(g, tc.dims)
		if err != nil {
			t.Fatal(err)
		}
		st, err := passes.Run(g, passes.Fused, passes.Options{Dims: full, Target: plan.H200, Check: Emittable, GemmWGMMA: GemmWGMMA, GemvTiles: GemvTiles, Prologue: true})
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
		var pro []string
		step := 0
		for _, k := range st.Plan.Kernels {
			if len(k.Prologue()) > 0 {
				pro = append(pro, k.Name)
			}
			if !k.Load {
				step++
			}
		}
		if step != tc.step || !slices.Equal(pro, tc.pro) {
			t.Errorf("%s: %d kernels, prologues in %v; want %d, in %v", tc.spec, step, pro, tc.step, tc.pro)
		}
		for _, k := range st.Plan.Kernels {
			if len(k.Prologue()) > 0 {
				checkProloguePrefetch(t, tc.spec, string(res.PTX), st.Plan, k)
			}
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

// checkProloguePrefetch checks that the entry of kernel k, a GEMV with a
// prologue, prefetches each param its prologue reads (a norm's weight and
// bias, or their load-stage folds) into L2 before a griddepcontrol.wait.
func checkProloguePrefetch(t *testing.T, spec, ptx string, p *plan.Plan, k *plan.Kernel) {
	t.Helper()
	body, ok := ptxEntry(ptx, k.Name)
	if !ok {
		t.Errorf("%s: no entry %s in the PTX", spec, k.Name)
		return
	}
	params := kernelParams(p.Graph, k)
	folded := p.Folded()
	n := 0
	for _, node := range k.Prologue() {
		for _, a := range node.Args {
			v := plan.Root(a)
			if v.Def.Op != ir.OpParam && !slices.Contains(folded, v) {
				continue
			}
			i := slices.IndexFunc(params, func(q codegen.Param) bool { return q.Value == v })
			re := regexp.MustCompile(`\[` + regexp.QuoteMeta(fmt.Sprintf("%s_param_%d", k.Name, i)) + `\]`)
			if i < 0 || !warmedBeforeWait(body, []*regexp.Regexp{re}) {
				t.Errorf("%s: %s does not prefetch its prologue's param %s (parameter %d) before its wait", spec, k.Name, v.Ref(), i)
			}
			n++
		}
	}
	if n == 0 {
		t.Errorf("%s: %s's prologue reads no param", spec, k.Name)
	}
}
