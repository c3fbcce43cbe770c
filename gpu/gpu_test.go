package gpu

import (
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
	"github.com/fuser-dev/fuser/specs/testlayers"
)

func TestCasesDeterministic(t *testing.T) {
	a, b := Cases(DefaultSeed), Cases(DefaultSeed)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("Cases is not deterministic")
	}
	names := map[string]bool{}
	kinds := map[string]bool{}
	for _, c := range a {
		if names[c.Name()] {
			t.Errorf("two cases named %s", c.Name())
		}
		names[c.Name()] = true
		kinds[c.Spec] = true
		if c.Dims["T"] == 1 && c.Dims["S"] == 1 {
			kinds["T=1"] = true
		}
		if c.Dims["T"] >= 1500 {
			kinds["long T"] = true
		}
		if c.Dims["B"]*c.Dims["S"] > 16 {
			kinds["gemm"] = true
		}
		if c.Dims["B"]*c.Dims["S"] == 1 && !strings.HasPrefix(c.Spec, "mat_") {
			kinds["one row "+c.Spec] = true
		}
		if slices.Contains(c.QLens, 0) && slices.Contains(c.QLens, 1) {
			kinds["empty and one-token prompts "+c.Spec] = true
		}
	}
	wants := append(specs.Names(), "attn_paged", "attn_ragged", "T=1", "long T", "gemm")
	for _, name := range testlayers.VarlenNames() {
		wants = append(wants, "empty and one-token prompts varlen_"+name)
	}
	for _, name := range specs.Names() {
		wants = append(wants, "one row "+name)
	}
	for _, want := range wants {
		if !kinds[want] {
			t.Errorf("no case covers %s", want)
		}
	}
}

// tensorCoreGemv finds the instantiation of a tensor-core GEMV tile
// (device/gemv_mma.cuh, gemv_wgmma.cuh) for a kernel's context in its
// source.
var tensorCoreGemv = regexp.MustCompile(`fz_gemv_(mma|wg)_tile<fzb_`)

// TestCasesOnCPU does on the CPU everything the device suite does but the
// GPU: every small case plans, generates reproducibly, lays out its
// buffers, and the references give every kernel parameter its bytes. The
// small cases cover the GEMV with and without split-K, on CUDA cores and,
// for 2 to 64 rows, on tensor cores, and the wgmma prefill attention with
// and without persistent blocks.
func TestCasesOnCPU(t *testing.T) {
	gemvs := map[[2]bool]bool{}
	persist := map[bool]bool{}
	for _, c := range Cases(DefaultSeed) {
		if c.Full {
			continue // minutes of CPU reference; the device suite runs them
		}
		for _, p := range caseOnCPU(t, c, true) {
			for _, k := range p.Kernels {
				if l := k.Plan.Launch; l != nil && l.Variant == plan.VariantGemv {
					tc := l.Tile[0] > plan.GemvCUDACoreRows && tensorCoreGemv.MatchString(k.Source)
					gemvs[[2]bool{l.Splits > 1, tc}] = true
				}
				if l := k.Plan.Launch; l != nil && l.Variant == plan.VariantPrefill && l.WGMMA {
					persist[l.Persistent] = true
				}
			}
		}
	}
	for _, p := range []bool{false, true} {
		if !persist[p] {
			t.Errorf("no small case plans a wgmma prefill attention with persistent blocks %v", p)
		}
	}
	for _, split := range []bool{false, true} {
		for _, tc := range []bool{false, true} {
			if !gemvs[[2]bool{split, tc}] {
				t.Errorf("no small case plans a GEMV with split-K %v and tensor cores %v", split, tc)
			}
		}
	}
}

// caseOnCPU checks case c on the CPU and returns its fused and unfused
// plans; strict fails on a kernel codegen/cuda cannot generate for another
// reason than "not supported yet" (the device suite skips such a kernel),
// otherwise it logs it.
func caseOnCPU(t *testing.T, c Case, strict bool) []*Plan {
	t.Helper()
	g, err := c.Graph()
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := c.Inputs(g)
	if err != nil {
		t.Fatalf("%s: %v", c.Name(), err)
	}
	var layer *interp.Result
	var plans []*Plan
	var refs []*Reference
	for _, fused := range []bool{true, false} {
		p, err := NewPlan(g, c.Dims, fused)
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		plans = append(plans, p)
		if layer == nil {
			if layer, err = RunLayer(g, p.Dims, inputs); err != nil {
				t.Fatalf("%s: %v", c.Name(), err)
			}
		}
		again, _ := NewPlan(g, c.Dims, fused)
		for i, k := range p.Kernels {
			if k.Key != again.Kernels[i].Key {
				t.Fatalf("%s %s: the CUDA source is not reproducible", c.Name(), k.Plan.Name)
			}
			if k.Err != nil && !strings.Contains(k.Err.Error(), "not supported yet") {
				if strict {
					t.Errorf("%s %s: %v", c.Name(), k.Plan.Name, k.Err)
				} else {
					t.Logf("%s %s: %v", c.Name(), k.Plan.Name, k.Err)
				}
			}
		}
		lay, err := NewLayout(p)
		if err != nil {
			t.Fatalf("%s %s: %v", c.Name(), PlanName(fused), err)
		}
		ref, err := NewReference(p, inputs, layer)
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		checkBytes(t, c.Name()+" "+PlanName(fused), p, lay, ref)
		refs = append(refs, ref)
	}
	checkBudget(t, c.Name(), plans[0], layer, refs[0].Kernels, refs[1].Kernels)
	return plans
}

// checkBudget checks that the fused plan's rounded reference (rounded
// where its kernels store, as they do) is within the error budget the
// device suite holds its layer results to (LayerBudget; base is the
// unfused plan's rounded reference).
func checkBudget(t *testing.T, name string, p *Plan, layer, fused, base *interp.Result) {
	t.Helper()
	for _, v := range p.Results() {
		got := fused.Outputs[v.Name]
		if IsState(v) {
			got = fused.States[v.Name]
		}
		if got == nil {
			t.Fatalf("%s: no fused result for %s", name, v.Name)
		}
		d, ok, err := LayerBudget(v, got.Data, layer, base)
		switch {
		case err != nil:
			t.Fatalf("%s: %v", name, err)
		case ok && !d.OK():
			t.Errorf("%s %s: the fused plan's rounded reference is past the budget: %s", name, v.Name, d)
		case ok:
			t.Logf("%s %s: %s", name, v.Name, d)
		}
	}
}

func checkBytes(t *testing.T, name string, p *Plan, lay *Layout, ref *Reference) {
	t.Helper()
	for _, b := range lay.Own {
		var data []byte
		var err error
		switch b.Role {
		case "output", "folded":
			data, err = ref.ValueBytes(b.Value)
		case "state":
			data, err = ref.StateBytes(b.Value, false)
			if err == nil && p.Plan.Graph.AppendOf(b.Value) != nil {
				var after []byte
				if after, err = ref.StateBytes(b.Value, true); err == nil && len(after) != len(data) {
					t.Errorf("%s: state %s is %d bytes before the step, %d after", name, b.Value.Name, len(data), len(after))
				}
			}
		default:
			data, err = ref.LeafBytes(b.Value)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// A ragged cache fills the start of a buffer sized for T+S tokens
		// per sequence.
		ragged := b.Role == "state" && b.Value.Def.Attr.Layout != nil && b.Value.Def.Attr.Layout.Kind == ir.RaggedLayout
		if int64(len(data)) != b.Bytes && !(ragged && int64(len(data)) < b.Bytes) {
			t.Errorf("%s: %s %s: %d bytes of data for a %d-byte buffer", name, b.Role, b.Value.Name, len(data), b.Bytes)
		}
	}
	for _, k := range p.Kernels {
		if k.Err != nil {
			continue
		}
		for _, prm := range k.CUDA.Params {
			if prm.Value == nil {
				continue
			}
			b, ok := lay.Buf(prm.Value)
			if !ok {
				t.Fatalf("%s: %s: no buffer for %s", name, k.Plan.Name, prm.Value.Ref())
			}
			if b.Role != "arena" {
				continue
			}
			data, err := ref.ValueBytes(prm.Value)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, k.Plan.Name, err)
			}
			if int64(len(data)) != b.Bytes {
				t.Errorf("%s: %s: %s: %d bytes of data for %d", name, k.Plan.Name, prm.Value.Ref(), len(data), b.Bytes)
			}
			if _, err := ref.Valid(prm.Value); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

func TestEncodeDecode(t *testing.T) {
	vals := []float64{0, 1, -1, 0.5, 3.140625, -2.75, 1e-3, 448, -0.001953125, 65504, 6e-8, 2e-40}
	for _, dt := range []ir.DType{ir.BF16, ir.F16, ir.F32, ir.FP8E4M3} {
		for _, v := range vals {
			want := interp.Round(v, dt)
			got := Decode(Encode([]float64{v}, dt), dt)[0]
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("%s: %g encodes and decodes to %g, want %g", dt, v, got, want)
			}
		}
		poison := make([]byte, dt.Size())
		for i := range poison {
			poison[i] = Poison
		}
		if !math.IsNaN(Decode(poison, dt)[0]) {
			t.Errorf("%s: the poison byte is not NaN", dt)
		}
	}
	if got := Decode(Encode([]float64{-7, 123456}, ir.I32), ir.I32); got[0] != -7 || got[1] != 123456 {
		t.Errorf("i32: %v", got)
	}
}

// TestSuiteRunsEveryOp checks that the device suite's cases, as written,
// use every op of the language (attention is formed by the passes, from
// the written softmax and matmuls) and lay out values in every dtype, so
// that each is computed on the device at least once (issue #19).
func TestSuiteRunsEveryOp(t *testing.T) {
	ops := map[ir.Op]bool{}
	dts := map[ir.DType]bool{}
	for _, c := range Cases(DefaultSeed) {
		g, err := c.Graph()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range g.Nodes {
			ops[n.Op] = true
			for _, o := range n.Outs {
				dts[o.Type.DType] = true
			}
		}
	}
	for op := ir.OpInput; op.String() != "?"; op++ {
		if !ops[op] && op != ir.OpAttention {
			t.Errorf("no suite case computes %s", op)
		}
	}
	for _, dt := range []ir.DType{ir.BF16, ir.F16, ir.F32, ir.FP8E4M3, ir.I32} {
		if !dts[dt] {
			t.Errorf("no suite case has a %s value", dt)
		}
	}
}
