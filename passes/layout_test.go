package passes_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// layoutHeader begins the layers of TestLayout, whose bodies read a row
// kernel's value a = exp(x) through views.
const layoutHeader = "layer perm\ndim B, S\nconst H = 4, D = 8\n"

// The declarations of TestLayout's layers: x and a are [B, H, S, D].
const (
	declX  = "input x : f32[B, H, S, D]\n"
	declW  = "param w : f32[H*D, 16]\n"
	declWd = "param wd : f32[D, 16]\n"
	declY  = "output y : f32[B, S, 16]\n"
	readY  = "y = reshape(transpose(a, [0, 2, 1, 3]), [B, S, H*D]) @ w\n"
)

// TestLayout checks when the layout pass stores a kernel's value in the
// order its readers see it, what it explains, and that the plan still
// computes the written graph.
func TestLayout(t *testing.T) {
	prefill := map[string]int64{"B": 2, "S": 5}
	for _, c := range []struct {
		name, body string
		dims       map[string]int64
		// stored is the layout of the row kernel's value, nil for none.
		stored  plan.Layout
		explain string
	}{
		{name: "transpose_reshape", dims: prefill, stored: plan.Layout{0, 2, 1, 3},
			body:    declX + declW + declY + "a = exp(x)\n" + readY,
			explain: "layout       stored    %3.a of k00_row_exp as [B, S, 4, 8] (axes 0, 2, 1, 3): read contiguously by k01_gemm_matmul"},
		{name: "transpose_only", dims: prefill, stored: plan.Layout{0, 2, 1, 3},
			body:    declX + declWd + "output y : f32[B, S, H, 16]\na = exp(x)\ny = transpose(a, [0, 2, 1, 3]) @ wd\n",
			explain: "stored    %3.a of k00_row_exp as [B, S, 4, 8] (axes 0, 2, 1, 3): read contiguously by k01_gemm_matmul"},
		{name: "second_reader_as_written", dims: prefill,
			body:    declX + declW + declWd + declY + "output z : f32[B, H, S, 16]\na = exp(x)\n" + readY + "z = a @ wd\n",
			explain: "kept      %4.a of k00_row_exp: its readers want it in different orders (k01_gemm_matmul: axes 0, 2, 1, 3, k02_gemm_matmul: axes 0, 1, 2, 3); read through a strided view by k01_gemm_matmul"},
		{name: "graph_output", dims: prefill,
			body:    declX + declW + declY + "output a : f32[B, H, S, D]\na = exp(x)\n" + readY,
			explain: "kept      %3.a of k00_row_exp: a graph output keeps its declared layout; read through a strided view by k01_gemm_matmul"},
		{name: "axis_divided", dims: prefill,
			body:    "input xf : f32[B, S, H*D]\n" + declWd + "output y : f32[B, H, S, 16]\na = exp(xf)\ny = transpose(reshape(a, [B, S, H, D]), [0, 2, 1, 3]) @ wd\n",
			explain: "kept      %3.a of k00_row_exp: k01_gemm_matmul reads it through views that divide an axis (a reshape to [B, S, 4, 8])"},
		{name: "last_axis_moved", dims: prefill,
			body:    "input xs : f32[B, H, D, D]\n" + declWd + "output y : f32[B, H, D, 16]\na = exp(xs)\ny = transpose(a, [0, 1, 3, 2]) @ wd\n",
			explain: "kept      %3.a of k00_row_exp: the order its readers want (axes 0, 1, 3, 2) moves its last axis"},
		// At decode (S = 1) the order lays the buffer out as it is, and the
		// value is still stored in it: the reader's view is then contiguous
		// for every S, as the matmul's tensor-core GEMV needs to know.
		{name: "decode", dims: map[string]int64{"B": 2, "S": 1}, stored: plan.Layout{0, 2, 1, 3},
			body:    declX + declW + declY + "a = exp(x)\n" + readY,
			explain: "stored    %3.a of k00_row_exp as [B, S, 4, 8] (axes 0, 2, 1, 3): read contiguously by k01_gemm_matmul"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := frontend.Parse(c.name+".fu", layoutHeader+c.body)
			if err != nil {
				t.Fatal(err)
			}
			st := fusedState(t, g, c.dims)
			if !logHas(st, c.explain) {
				t.Errorf("log lacks %q:\n%s", c.explain, logText(st))
			}
			var got plan.Layout
			for v, l := range st.Plan.Layouts {
				if v.Def.Op != ir.OpExp || got != nil {
					t.Fatalf("layout %s of %s", l, v.Ref())
				}
				got = l
			}
			if !slices.Equal(got, c.stored) {
				t.Errorf("stored layout %v, want %v", got, c.stored)
			}
			if c.stored != nil && !strings.Contains(st.Plan.String(), "  stores ") {
				t.Errorf("the plan does not print the layout:\n%s", st.Plan)
			}
			if err := planEqualsGraph(g, st.Plan, c.dims, 1); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestLayoutPrefill checks that the Llama-3-8B prefill and decode step
// store attention's result [B, S, H, Dh] for the output projection,
// Gemma-2's head-dim-256 attention (codegen.PermutedStoreMaxDh) keeps the
// layout, and that the shrunk Llama layer (tiny) computes the written layer,
// at prefill and at decode, with
// the layout.
func TestLayoutPrefill(t *testing.T) {
	for _, c := range []struct {
		spec   string
		dims   map[string]int64
		stored bool
	}{
		{"llama3_8b", map[string]int64{"B": 1, "S": 7, "T": 3}, true},
		{"llama3_8b", map[string]int64{"B": 2, "S": 1, "T": 9}, true},
		{"gemma2", map[string]int64{"B": 2, "S": 3, "T": 17}, false},
		{"tiny", map[string]int64{"B": 2, "S": 9, "T": 5}, true},
		{"tiny", map[string]int64{"B": 3, "S": 1, "T": 5}, true},
	} {
		g := load(t, c.spec)
		p := fusedPlan(t, g, c.dims)
		var layouts []plan.Layout
		for _, k := range p.Kernels {
			if l := p.Layouts[k.Outputs[0]]; l != nil && k.Strategy == plan.Attention {
				layouts = append(layouts, l)
			}
		}
		want := 0
		if c.stored {
			want = 1
		}
		if len(layouts) != want || len(p.Layouts) != want {
			t.Fatalf("%s %v: layouts %v, want %d of attention's result", c.spec, c.dims, p.Layouts, want)
		}
		if c.stored && !slices.Equal(layouts[0], plan.Layout{0, 2, 1, 3}) {
			t.Errorf("%s: attention's result stored in %s, want axes 0, 2, 1, 3", c.spec, layouts[0])
		}
		if c.spec == "tiny" {
			if err := planEqualsGraph(g, p, c.dims, 2); err != nil {
				t.Error(err)
			}
		}
	}
}

// fusedState runs the fused pipeline at dims.
func fusedState(t *testing.T, g *ir.Graph, dims map[string]int64) *passes.State {
	t.Helper()
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	return st
}
