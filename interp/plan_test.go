package interp

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
	"github.com/fuser-dev/fuser/specs/testlayers"
)

// smallSpec returns the shipped spec name with its model constants shrunk
// (testlayers.Small).
func smallSpec(t *testing.T, name string) *ir.Graph {
	t.Helper()
	g, err := testlayers.Small(name)
	if err != nil {
		t.Fatalf("spec %s at test sizes: %v", name, err)
	}
	return g
}

// planDiff compares got with want to 1e-12 relative error.
func planDiff(what string, got, want *Tensor) error {
	if got == nil || want == nil {
		return fmt.Errorf("%s: missing tensor (got %v, want %v)", what, got != nil, want != nil)
	}
	if !got.SameShape(want.Shape) {
		return fmt.Errorf("%s: shape %v, want %v", what, got.Shape, want.Shape)
	}
	if e := relativeError(got.Data, want.Data); !(e <= 1e-12) {
		return fmt.Errorf("%s: relative error %.3g", what, e)
	}
	return nil
}

// planCase is one comparison of a plan run with the interpreter.
type planCase struct {
	g    *ir.Graph
	dims map[string]int64
	seed int64
	opt  PlanOptions
	// unfused also runs the unfused plan.
	unfused bool
}

// check runs the fused plan (and the unfused one) with RunPlan and the
// written graph with Run on the same random inputs, and compares the
// outputs, the states after the step and every value a kernel wrote that
// the written graph also computes (same value id). It returns the fused
// plan's state for further checks.
func (c planCase) check(t *testing.T) *passes.State {
	t.Helper()
	st, err := c.diff(t)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// diff is check returning the first difference as an error; errors other
// than differences fail the test.
func (c planCase) diff(t *testing.T) (*passes.State, error) {
	t.Helper()
	in, err := RandomInputs(c.g, c.dims, c.seed)
	if err != nil {
		t.Fatalf("RandomInputs: %v", err)
	}
	full, _, err := DeriveDims(c.g, c.dims)
	if err != nil {
		t.Fatalf("DeriveDims: %v", err)
	}
	want, err := Run(c.g, full, in, c.opt.Options)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	byID := map[int]*Tensor{}
	for v, x := range want.Values {
		byID[v.ID] = x
	}
	pipelines := []struct {
		name string
		p    []passes.Pass
	}{{"fused", passes.Fused}}
	if c.unfused {
		pipelines = append(pipelines, struct {
			name string
			p    []passes.Pass
		}{"unfused", passes.Unfused})
	}
	var fused *passes.State
	for _, pl := range pipelines {
		st, err := passes.Run(c.g, pl.p, passes.Options{Dims: full})
		if err != nil {
			t.Fatalf("%s plan: %v", pl.name, err)
		}
		if pl.name == "fused" {
			fused = st
		}
		got, err := RunPlan(st.Plan, full, in, c.opt)
		if err != nil {
			t.Fatalf("RunPlan (%s): %v\n%s", pl.name, err, st.Plan)
		}
		if len(got.Outputs) != len(want.Outputs) {
			return fused, fmt.Errorf("%s: %d outputs, want %d", pl.name, len(got.Outputs), len(want.Outputs))
		}
		for name, w := range want.Outputs {
			if err := planDiff(pl.name+" output "+name, got.Outputs[name], w); err != nil {
				return fused, err
			}
			if allZeroData(w.Data) {
				t.Fatalf("output %s is all zeros: the test checks nothing", name)
			}
		}
		for name, w := range want.States {
			if err := planDiff(pl.name+" state "+name, got.States[name], w); err != nil {
				return fused, err
			}
		}
		compared := 0
		for v, x := range got.Values {
			if w, ok := byID[v.ID]; ok && x.SameShape(w.Shape) {
				if err := planDiff(pl.name+" value "+v.Ref(), x, w); err != nil {
					return fused, err
				}
				compared++
			}
		}
		if compared == 0 {
			t.Fatalf("%s: no kernel output matched a value of the written graph", pl.name)
		}
	}
	return fused, nil
}

func allZeroData(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}

// attentionKernel returns the fused plan's attention kernel.
func attentionKernel(t *testing.T, p *plan.Plan) *plan.Kernel {
	t.Helper()
	for _, k := range p.Kernels {
		if k.Strategy == plan.Attention {
			return k
		}
	}
	t.Fatalf("the fused plan has no attention kernel:\n%s", p)
	return nil
}

// TestRunPlanSpecs runs every shipped spec, at test sizes, as its fused and
// its unfused plan and compares them with the interpreter on the written
// graph: decode (S=1, split-KV) and prefill (S=17, tiled) over caches of 1,
// 100 and 257 tokens, none a tile multiple, with every row and attention
// kernel also cross-checked op by op.
func TestRunPlanSpecs(t *testing.T) {
	for _, name := range specs.Names() {
		g := smallSpec(t, name)
		for _, S := range []int64{1, 17} {
			for _, T := range []int64{1, 100, 257} {
				t.Run(fmt.Sprintf("%s/S=%d/T=%d", name, S, T), func(t *testing.T) {
					dims := map[string]int64{"B": 2, "S": S, "T": T, "L": 37}
					var stats FlashStats
					st := planCase{g: g, dims: dims, seed: S*1000 + T, unfused: true,
						opt: PlanOptions{CrossCheck: 1e-12, FlashStats: &stats}}.check(t)
					k := attentionKernel(t, st.Plan)
					if k.Launch.Variant.Decode() != (S == 1) {
						t.Fatalf("attention kernel runs %s at S=%d", k.Launch.Variant, S)
					}
					if stats.Tiles == 0 || stats.Partials == 0 {
						t.Fatalf("no flash work recorded: %+v", stats)
					}
				})
			}
		}
	}
}

// TestRunPlanSchedules runs the attention-carrying specs with other split
// counts (more splits than keys included) and tiles than their launch.
func TestRunPlanSchedules(t *testing.T) {
	for _, name := range []string{"tiny", "cascade", "paged_decode", "mistral_swa", "gemma2_softcap"} {
		g := smallSpec(t, name)
		for _, c := range []struct {
			S, T           int64
			splits, br, bc int
		}{
			{1, 100, 2, 0, 0}, {1, 100, 7, 16, 16}, {1, 17, 64, 0, 0}, {1, 1, 7, 0, 0},
			{17, 100, 0, 16, 16}, {17, 257, 0, 64, 32}, {17, 1, 0, 128, 64},
		} {
			t.Run(fmt.Sprintf("%s/S=%d/T=%d/splits=%d/tile=%dx%d", name, c.S, c.T, c.splits, c.br, c.bc), func(t *testing.T) {
				var stats FlashStats
				opt := PlanOptions{Splits: c.splits, Br: c.br, Bc: c.bc, FlashStats: &stats}
				planCase{g: g, dims: map[string]int64{"B": 3, "S": c.S, "T": c.T, "L": 5}, seed: c.S + c.T, opt: opt}.check(t)
				if c.splits == 64 && stats.EmptySplits == 0 {
					t.Fatalf("64 splits over at most %d keys left no split empty", c.T+c.S)
				}
			})
		}
	}
}

// attnLayerSpec builds testlayers' attention layer with substitutions kv.
func attnLayerSpec(t *testing.T, name string, kv []string) *ir.Graph {
	t.Helper()
	g, err := testlayers.Attn(name, kv)
	if err != nil {
		t.Fatalf("attention layer %s: %v", name, err)
	}
	return g
}

// TestRunPlanLongContext runs each attention variant (score biases
// among them) over 3000 cached
// tokens (cascade: 500 shared and 3000 own), in decode (12 splits) and
// prefill.
func TestRunPlanLongContext(t *testing.T) {
	for _, l := range slices.Concat(testlayers.AttnLayers, testlayers.BiasLayers) {
		g := attnLayerSpec(t, l.Name, l.Subs)
		for _, S := range []int64{1, 17} {
			t.Run(fmt.Sprintf("%s/S=%d", l.Name, S), func(t *testing.T) {
				dims := map[string]int64{"B": 2, "S": S, "T": 3000, "L": 500}
				st := planCase{g: g, dims: dims, seed: S, opt: PlanOptions{CrossCheck: 1e-12}}.check(t)
				k := attentionKernel(t, st.Plan)
				if S == 1 && k.Launch.Splits < 2 {
					t.Fatalf("decode over 3000 tokens has %d splits", k.Launch.Splits)
				}
			})
		}
	}
}

// TestRunPlanRowsOnePass checks that every row kernel of the shipped specs
// runs the one-pass algorithm (not the op-by-op fallback) and equals the
// op-by-op computation.
func TestRunPlanRowsOnePass(t *testing.T) {
	for _, name := range specs.Names() {
		g := smallSpec(t, name)
		for _, pl := range [][]passes.Pass{passes.Fused, passes.Unfused} {
			dims := map[string]int64{"B": 2, "S": 5, "T": 9, "L": 3}
			in, err := RandomInputs(g, dims, 3)
			if err != nil {
				t.Fatal(err)
			}
			full, _, _ := DeriveDims(g, dims)
			st, err := passes.Run(g, pl, passes.Options{Dims: full})
			if err != nil {
				t.Fatal(err)
			}
			rows := 0
			onePass := func(kr *kernelRun) {
				if kr.k.Strategy != plan.Row {
					return
				}
				rows++
				ok, err := kr.rows()
				if err != nil || !ok {
					t.Fatalf("%s: row kernel %s: one-pass algorithm not taken (%v)", name, kr.k.Name, err)
				}
			}
			if _, err := runPlanHook(st.Plan, full, in, PlanOptions{CrossCheck: 1e-12}, onePass); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if rows == 0 {
				t.Fatalf("%s: no row kernel", name)
			}
		}
	}
}

// runPlanHook runs a plan kernel by kernel like RunPlan, calling hook on a
// fresh run of every kernel first (on its own machine).
func runPlanHook(p *plan.Plan, dims map[string]int64, inputs map[string]*Tensor, opt PlanOptions, hook func(*kernelRun)) (*Result, error) {
	pr := newPlanRun(p, dims, opt)
	if err := pr.load(inputs); err != nil {
		return nil, err
	}
	for _, k := range p.Kernels {
		hook(pr.newKernelRun(k))
		if err := pr.newKernelRun(k).run(); err != nil {
			return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
	}
	return pr.result()
}

// TestRunPlanVisibility checks that plan bugs are reported: a kernel
// reading a value it does not list, a value read before it is written, an
// output the kernel does not compute, a graph output nobody writes, and
// a paged cache read without its page table.
func TestRunPlanVisibility(t *testing.T) {
	g := smallSpec(t, "tiny")
	dims := map[string]int64{"B": 2, "S": 3, "T": 5}
	in, err := RandomInputs(g, dims, 1)
	if err != nil {
		t.Fatal(err)
	}
	fresh := func() *plan.Plan {
		st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims})
		if err != nil {
			t.Fatal(err)
		}
		return st.Plan
	}
	if _, err := RunPlan(fresh(), dims, in, PlanOptions{}); err != nil {
		t.Fatalf("the plan itself fails: %v", err)
	}
	for _, c := range []struct {
		name   string
		mutate func(p *plan.Plan)
		want   string
	}{
		{"undeclared input", func(p *plan.Plan) {
			k := p.Kernels[len(p.Kernels)-1]
			k.Inputs = k.Inputs[:len(k.Inputs)-1]
		}, "neither lists among its inputs nor computes"},
		{"undeclared leaf", func(p *plan.Plan) {
			k := p.Kernels[0]
			k.Inputs = k.Inputs[:1] // drops the norm weight
		}, "neither lists among its inputs nor computes"},
		{"unwritten output", func(p *plan.Plan) {
			p.Kernels[0].Outputs = nil
		}, "before any kernel writes it"},
		{"output not computed", func(p *plan.Plan) {
			p.Kernels[0].Outputs = append(p.Kernels[0].Outputs, p.Kernels[1].Outputs[0])
		}, "does not compute it"},
		{"graph output", func(p *plan.Plan) {
			k := p.Kernels[len(p.Kernels)-1]
			k.Outputs = nil
		}, "written by no kernel"},
		{"order", func(p *plan.Plan) {
			p.Kernels[0], p.Kernels[1] = p.Kernels[1], p.Kernels[0]
		}, "invalid plan"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := fresh()
			c.mutate(p)
			_, err := RunPlan(p, dims, in, PlanOptions{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	// A paged cache: the append and attention kernels list the page table,
	// which the run checks.
	pg := smallSpec(t, "paged_decode")
	pdims, _, err := DeriveDims(pg, map[string]int64{"B": 2, "S": 1, "T": 20})
	if err != nil {
		t.Fatal(err)
	}
	pin, err := RandomInputs(pg, pdims, 1)
	if err != nil {
		t.Fatal(err)
	}
	st, err := passes.Run(pg, passes.Fused, passes.Options{Dims: pdims})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunPlan(st.Plan, pdims, pin, PlanOptions{}); err != nil {
		t.Fatalf("paged plan: %v", err)
	}
}

// TestRunPlanKernelsCovered checks that the spec tests exercise every
// kernel strategy, over the fused and the unfused plans.
func TestRunPlanKernelsCovered(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range specs.Names() {
		for _, pl := range [][]passes.Pass{passes.Fused, passes.Unfused} {
			st, err := passes.Run(smallSpec(t, name), pl, passes.Options{Dims: map[string]int64{"B": 2, "S": 1, "T": 5, "L": 3, "P": 8, "N": 8}})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range st.Plan.Kernels {
				seen[k.Strategy.String()] = true
			}
		}
	}
	var got []string
	for s := range seen {
		got = append(got, s)
	}
	sort.Strings(got)
	if want := "append attention copy gemm reduce row"; strings.Join(got, " ") != want {
		t.Fatalf("strategies in the plans: %v, want %s", got, want)
	}
}

// TestRunPlanAttentionPassEdgeCases covers written attention the pass must
// not mistranslate: nested sliding windows fuse to the narrower window and
// agree with the written graph; a negative scale applied after the mask
// (which turns masked -Inf into +Inf) must not fuse at all.
func TestRunPlanAttentionPassEdgeCases(t *testing.T) {
	g := attnLayerSpec(t, "nested", []string{"score", "window(window(q @ transpose(Ks) / sqrt(Dh), 5), 3)"})
	if _, err := (planCase{g: g, dims: map[string]int64{"B": 2, "S": 9, "T": 37}, seed: 1}).diff(t); err != nil {
		t.Errorf("nested windows: the fused plan differs from the written graph: %v", err)
	}
	g = attnLayerSpec(t, "negscale", []string{"score", "causal(q @ transpose(Ks)) * (0 - 0.35)"})
	st, err := passes.Run(g, passes.Fused, passes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range st.Graph.Nodes {
		if n.Op == ir.OpAttention {
			t.Errorf("a negative scale after the mask was fused into %s", n)
		}
	}
}

// TestRunPlanRound runs the tiny spec's plans with Options.Round: the
// unfused plan rounds exactly as Run does (up to the online softmax's last
// bit flipping a rounding), the fused plan stays within bf16 precision of
// it, and every value a kernel wrote is representable in its dtype.
func TestRunPlanRound(t *testing.T) {
	g := smallSpec(t, "tiny")
	dims := map[string]int64{"B": 2, "S": 17, "T": 100}
	in, err := RandomInputs(g, dims, 4)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Round: true}
	want, err := Run(g, dims, in, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p    []passes.Pass
		tol  float64
	}{{"unfused", passes.Unfused, 1e-2}, {"fused", passes.Fused, 5e-2}} {
		st, err := passes.Run(g, c.p, passes.Options{Dims: dims})
		if err != nil {
			t.Fatal(err)
		}
		got, err := RunPlan(st.Plan, dims, in, PlanOptions{Options: opt})
		if err != nil {
			t.Fatal(err)
		}
		e := relativeError(got.Outputs["y"].Data, want.Outputs["y"].Data)
		t.Logf("%s: relative difference %.3g", c.name, e)
		if e > c.tol {
			t.Fatalf("%s plan with rounding differs by %.3g from Run with rounding", c.name, e)
		}
		for v, x := range got.Values {
			for _, d := range x.Data {
				if Round(d, v.Type.DType) != d {
					t.Fatalf("%s: %s holds %g, not a %s value", c.name, v.Ref(), d, v.Type.DType)
				}
			}
		}
	}
}

// TestRunPlanUnbound runs a plan built without dims (no launch): attention
// then runs the prefill tiling with 64×64 tiles.
func TestRunPlanUnbound(t *testing.T) {
	g := smallSpec(t, "mistral_swa")
	st, err := passes.Run(g, passes.Fused, passes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int64{"B": 2, "S": 3, "T": 70}
	in, err := RandomInputs(g, dims, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Run(g, dims, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var stats FlashStats
	got, err := RunPlan(st.Plan, dims, in, PlanOptions{FlashStats: &stats})
	if err != nil {
		t.Fatal(err)
	}
	if err := planDiff("y", got.Outputs["y"], want.Outputs["y"]); err != nil {
		t.Fatal(err)
	}
	if stats.EmptySplits != 0 || stats.Tiles == 0 {
		t.Fatalf("unexpected schedule: %+v", stats)
	}
}

// TestRowTreeOneKernel checks that an element-wise tree whose leaves are
// computed apart (tanh(x) * sigmoid(z), the square root of another input)
// plans to one row kernel with the norm after it, not one kernel per
// leaf, and that the kernel runs the one-pass algorithm and equals the
// written graph.
func TestRowTreeOneKernel(t *testing.T) {
	g, err := frontend.Parse("tree.fu", `
layer tree
dim B, S
input x : bf16[B, S, 40]
input z : bf16[B, S, 40]
input w : bf16[40]
output y : bf16[B, S, 40]
a = tanh(x) * sigmoid(z) + sqrt(z * z + 1)
y = a * rsqrt(mean(a * a, axis=-1) + 1e-5) * w
`)
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int64{"B": 2, "S": 3}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Plan.Kernels) != 1 {
		var names []string
		for _, k := range st.Plan.Kernels {
			names = append(names, k.Name)
		}
		t.Fatalf("%d kernels %v, want one row kernel", len(st.Plan.Kernels), names)
	}
	in, err := RandomInputs(g, dims, 5)
	if err != nil {
		t.Fatal(err)
	}
	onePass := func(kr *kernelRun) {
		if ok, err := kr.rows(); err != nil || !ok {
			t.Fatalf("row kernel %s: one-pass algorithm not taken (%v)", kr.k.Name, err)
		}
	}
	if _, err := runPlanHook(st.Plan, dims, in, PlanOptions{CrossCheck: 1e-12}, onePass); err != nil {
		t.Fatal(err)
	}
}
