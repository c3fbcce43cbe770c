package plan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
)

// TestLayoutPermute checks the buffer order of a value under a layout:
// element [i, j, k] of a [2, 3, 4] value lies at the row-major offset of
// its indices in the layout's order.
func TestLayoutPermute(t *testing.T) {
	shape := []int{2, 3, 4}
	data := make([]float64, 24)
	for i := range data {
		data[i] = float64(i)
	}
	for _, l := range []plan.Layout{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {2, 1, 0}} {
		got, err := l.Permute(data, shape)
		if err != nil {
			t.Fatal(err)
		}
		stored := []int{shape[l[0]], shape[l[1]], shape[l[2]]}
		for i := range 2 {
			for j := range 3 {
				for k := range 4 {
					idx := []int{i, j, k}
					at := (idx[l[0]]*stored[1]+idx[l[1]])*stored[2] + idx[l[2]]
					if want := data[(i*3+j)*4+k]; got[at] != want {
						t.Fatalf("%s: element %v at %d is %v, want %v", l, idx, at, got[at], want)
					}
				}
			}
		}
	}
	for _, bad := range []plan.Layout{{0, 1}, {0, 1, 1}, {0, 1, 3}} {
		if _, err := bad.Permute(data, shape); err == nil {
			t.Errorf("layout %v of a rank-3 value accepted", []int(bad))
		}
	}
}

// TestLayoutPlan checks that a stored layout leaves the cost model's bytes
// as they are, that the plan's description carries it, and that Verify
// refuses a layout of a graph output or one that is not a permutation.
func TestLayoutPlan(t *testing.T) {
	file, src, _ := specs.Source("tiny")
	g, err := frontend.Parse(file, src)
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int64{"B": 2, "S": 9, "T": 5}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	p := st.Plan
	if len(p.Layouts) == 0 {
		t.Fatalf("the prefill plan stores no value permuted:\n%s", p)
	}
	with, err := p.Costs(dims)
	if err != nil {
		t.Fatal(err)
	}
	rowMajor := *p
	rowMajor.Layouts = nil
	without, err := rowMajor.Costs(dims)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(with, without) {
		t.Errorf("costs with the layouts %v, without %v", with, without)
	}
	var stored *ir.Value
	for v := range p.Layouts {
		stored = v
	}
	described := false
	for _, k := range p.Describe().Kernels {
		if l, ok := k.Layouts[stored.Ref()]; ok {
			described = slices.Equal(l, p.Layouts[stored])
		}
	}
	if !described {
		t.Errorf("the plan's description does not carry the layout of %s", stored.Ref())
	}
	for _, c := range []struct {
		v    *ir.Value
		l    plan.Layout
		want string
	}{
		{p.Graph.Outputs[0], plan.Layout{0, 2, 1}, "whose layout is fixed"},
		{stored, plan.Layout{0, 1, 1, 3}, "not a permutation"},
	} {
		bad := *p
		bad.Layouts = map[*ir.Value]plan.Layout{c.v: c.l}
		if err := bad.Verify(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Verify: %v, want an error about %q", err, c.want)
		}
	}
}
