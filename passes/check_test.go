package passes_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// TestCheckUndoesRefusedFusion: a code generator that refuses every GEMM
// kernel with an epilogue (passes.Options.Check) gets a plan whose GEMMs
// are bare, whose epilogue ops run as kernels of their own, whose log says
// why, and which still computes the written graph to 1e-12; one that
// refuses nothing gets the plan of a run without Check; and without bound
// dims nothing is asked.
func TestCheckUndoesRefusedFusion(t *testing.T) {
	src := `layer chk
dim B
input  x : f32[B, 32]
input  r : f32[B, 48]
param  w : f32[32, 96]
output y : f32[B, 48]
g, u = split(x @ w, [48, 48], axis=-1)
y = r + silu(g) * u
`
	g, err := frontend.Parse("chk.fu", src)
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int64{"B": 5}
	refuse := func(p *plan.Plan, k *plan.Kernel) error {
		if k.Strategy == plan.Gemm && len(k.Nodes) > 1 {
			return errors.New("no epilogues today")
		}
		return nil
	}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims, Check: refuse})
	if err != nil {
		t.Fatal(err)
	}
	gemms := 0
	for _, k := range st.Plan.Kernels {
		if k.Strategy == plan.Gemm {
			gemms++
			if len(k.Nodes) != 1 {
				t.Errorf("kernel %s keeps %d ops after its epilogue was refused", k.Name, len(k.Nodes))
			}
		}
	}
	if gemms != 1 || len(st.Plan.Kernels) < 2 {
		t.Errorf("%d GEMM kernels of %d, want a bare GEMM and the epilogue apart:\n%s", gemms, len(st.Plan.Kernels), st.Plan)
	}
	if log := logText(st); !strings.Contains(log, "codegen refused the kernel it joined: no epilogues today") {
		t.Errorf("the log does not say why the epilogue stayed apart:\n%s", log)
	}
	if err := planEqualsGraph(g, st.Plan, dims, 3); err != nil {
		t.Error(err)
	}

	plain, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	accept, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims, Check: func(*plan.Plan, *plan.Kernel) error { asked++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if asked == 0 || accept.Plan.String() != plain.Plan.String() {
		t.Errorf("a check that refuses nothing (asked %d times) changed the plan:\n%s\nwant\n%s", asked, accept.Plan, plain.Plan)
	}
	asked = 0
	if _, err := passes.Run(g, passes.Fused, passes.Options{Check: func(*plan.Plan, *plan.Kernel) error { asked++; return nil }}); err != nil {
		t.Fatal(err)
	}
	if asked != 0 {
		t.Errorf("Check was asked %d times of a plan without bound dims", asked)
	}
}
