package build

import (
	"fmt"

	"github.com/fuser-dev/fuser/codegen/cuda"
	"github.com/fuser-dev/fuser/codegen/golang"
	"github.com/fuser-dev/fuser/plan"
)

// cudaKernels is the generator of Build: codegen/cuda.
func cudaKernels(p *plan.Plan, _ map[string]int64) (string, []golang.Kernel, error) {
	m, err := cuda.Generate(p)
	if err != nil {
		return "", nil, err
	}
	ks, err := describe(p, m)
	if err != nil {
		return "", nil, err
	}
	return m.Source, ks, nil
}

// describe checks the module has the plan's kernels in the plan's order and
// hands their entries, parameters and block to the launch code, which
// checks every parameter has a buffer or a dim.
func describe(p *plan.Plan, m *cuda.Module) ([]golang.Kernel, error) {
	if len(m.Kernels) != len(p.Kernels) {
		return nil, fmt.Errorf("the CUDA module has %d kernels, the plan %d", len(m.Kernels), len(p.Kernels))
	}
	out := make([]golang.Kernel, len(m.Kernels))
	for i, k := range m.Kernels {
		if k.Name != p.Kernels[i].Name {
			return nil, fmt.Errorf("CUDA kernel %d is %s, plan kernel %s", i, k.Name, p.Kernels[i].Name)
		}
		out[i] = golang.Kernel{Entries: k.Entries, Params: k.Params, Block: k.Block}
	}
	return out, nil
}
