package build

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/codegen/cuda"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

func tinyPlan(t *testing.T) *plan.Plan {
	st, err := passes.Run(tiny(t), passes.Fused, passes.Options{Dims: tinyDims})
	if err != nil {
		t.Fatal(err)
	}
	return st.Plan
}

// module is what codegen/cuda could say of p: one entry per kernel (two for
// attention), the ABI parameters, a block of 128.
func module(p *plan.Plan) *cuda.Module {
	m := &cuda.Module{}
	for _, k := range p.Kernels {
		ck := cuda.Kernel{Name: k.Name, Entries: []string{k.Name}, Params: codegen.Params(p.Graph, k), Block: 128}
		if k.Strategy == plan.Attention {
			ck.Entries = append(ck.Entries, k.Name+"_lse")
		}
		m.Kernels = append(m.Kernels, ck)
	}
	return m
}

func TestDescribe(t *testing.T) {
	p := tinyPlan(t)
	m := module(p)
	ks, err := describe(p, m)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range m.Kernels {
		if !reflect.DeepEqual(ks[i].Entries, k.Entries) || ks[i].Block != 128 || len(ks[i].Params) != len(k.Params) {
			t.Errorf("kernel %s described as %+v", k.Name, ks[i])
		}
	}
	for _, tc := range []struct {
		name string
		edit func(m *cuda.Module)
		want string
	}{
		{"count", func(m *cuda.Module) { m.Kernels = m.Kernels[1:] }, "has 6 kernels, the plan 7"},
		{"name", func(m *cuda.Module) { m.Kernels[0].Name = "x" }, "CUDA kernel 0 is x"},
	} {
		m := module(p)
		tc.edit(m)
		if _, err := describe(p, m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestCUDAKernels runs the real generator on every spec: where codegen/cuda
// generates the plan, the launch code must take its kernels; where it does
// not, Build must report its error.
func TestCUDAKernels(t *testing.T) {
	for _, name := range specNames() {
		for _, pipeline := range [][]passes.Pass{passes.Fused, passes.Unfused} {
			g, dims := spec(t, name)
			st, err := passes.Run(g, pipeline, passes.Options{Dims: dims})
			if err != nil {
				t.Fatal(err)
			}
			_, genErr := cuda.Generate(st.Plan)
			_, err = generate(g, dims, Options{Unfused: len(pipeline) != len(passes.Fused)}, nil, cudaKernels)
			switch {
			case genErr != nil && (err == nil || !errors.Is(err, genErr) && err.Error() != genErr.Error()):
				t.Errorf("%s: cuda.Generate failed with %v, Build with %v", name, genErr, err)
			case genErr == nil && err != nil:
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}
