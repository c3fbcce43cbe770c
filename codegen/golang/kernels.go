package golang

import (
	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/plan"
)

// Kernel is what the launch code needs to know of one generated kernel: the
// CUDA side of a plan kernel, as codegen/cuda describes it.
type Kernel struct {
	// Entries are the entry functions, launched in order, each with the
	// plan kernel's grid.
	Entries []string
	// Params are every entry's parameters: pointers to leaves, outputs and
	// arena values, then dims, then tensor maps (the ABI of
	// codegen.Params, possibly with more leaf inputs, such as a page
	// table).
	Params []codegen.Param
	// Block is the threads per block the entries are written for.
	Block int
}

// MergeSuffix names the second entry of a plan kernel that takes two
// launches, in DefaultKernels.
const MergeSuffix = "_merge"

// PrefixSuffix names the first entry of a cascade decode attention kernel
// with a prefix pass (plan.Launch.PrefixSplits), launched before the
// kernel's own, in DefaultKernels.
const PrefixSuffix = "_prefix"

// DefaultKernels describes the plan's kernels as the plan alone has them,
// for launch code generated without a CUDA module: entries named after the
// kernel (when the launch plan takes two launches, then the kernel with
// MergeSuffix, or first the kernel with PrefixSuffix for a prefix pass),
// the ABI parameters and the launch plan's block. It has no tensor map
// parameters (codegen.RowMap), which codegen/cuda adds where a kernel
// copies through one.
func DefaultKernels(p *plan.Plan) []Kernel {
	out := make([]Kernel, len(p.Kernels))
	for i, k := range p.Kernels {
		out[i] = Kernel{Entries: []string{k.Name}, Params: codegen.Params(p.Graph, k)}
		if l := k.Launch; l != nil {
			out[i].Block = l.Block
			switch {
			case l.Launches == 2 && l.PrefixSplits > 0:
				out[i].Entries = []string{k.Name + PrefixSuffix, k.Name}
			case l.Launches == 2:
				out[i].Entries = append(out[i].Entries, k.Name+MergeSuffix)
			}
		}
	}
	return out
}
