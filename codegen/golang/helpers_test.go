package golang

import (
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
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
