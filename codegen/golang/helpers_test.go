package golang

import (
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
	"github.com/fuser-dev/fuser/specs/testlayers"
)

// testDims are the dims every spec is planned for, where it has them.
var testDims = map[string]int64{"B": 2, "S": 3, "T": 17, "P": 64, "N": 64, "L": 9}

// planSpec plans the embedded spec name (fused, or one op per kernel) at the
// test dims it declares.
func planSpec(t testing.TB, name string, unfused bool) (*plan.Plan, map[string]int64) {
	t.Helper()
	filename, src, ok := specs.Source(name)
	if !ok {
		t.Fatalf("no spec %s", name)
	}
	g, err := frontend.Parse(filename, src)
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int64{}
	for _, d := range g.Dims {
		n, ok := testDims[d]
		if !ok {
			t.Fatalf("%s: no test size for dim %s", name, d)
		}
		dims[d] = n
	}
	pipeline := passes.Fused
	if unfused {
		pipeline = passes.Unfused
	}
	st, err := passes.Run(g, pipeline, passes.Options{Dims: dims})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return st.Plan, dims
}

// specNames are the embedded specs.
func specNames() []string { return specs.Names() }

// planVarlen plans the layer over packed prompts name
// (testlayers.Varlen) fused, at 123 tokens of 5 prompts over 40 cached
// tokens, its page-pool dims derived; its unfused plan pairs tokens with
// their sequences in matmuls, which codegen/cuda refuses.
func planVarlen(t testing.TB, name string) (*plan.Plan, map[string]int64) {
	t.Helper()
	g, err := testlayers.Varlen(name)
	if err != nil {
		t.Fatal(err)
	}
	dims, _, err := interp.DeriveDims(g, map[string]int64{"B": 5, "N": 123, "T": 40})
	if err != nil {
		t.Fatal(err)
	}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return st.Plan, dims
}

// namedPlan is a plan the tests generate a package of, named as the
// package: the spec, with _unfused for its unfused plan, or varlen_NAME.
type namedPlan struct {
	name string
	p    *plan.Plan
	dims map[string]int64
}

// testPlans are every spec's fused and unfused plans and the varlen
// layers' fused ones.
func testPlans(t testing.TB) []namedPlan {
	var out []namedPlan
	for _, name := range specNames() {
		for _, unfused := range []bool{false, true} {
			p, dims := planSpec(t, name, unfused)
			pkg := name
			if unfused {
				pkg += "_unfused"
			}
			out = append(out, namedPlan{pkg, p, dims})
		}
	}
	for _, name := range testlayers.VarlenNames() {
		p, dims := planVarlen(t, name)
		out = append(out, namedPlan{"varlen_" + name, p, dims})
	}
	return out
}
