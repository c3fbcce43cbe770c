//go:build cuda

package gpu

import "fmt"

// ProfiledKernel is one kernel of a step run once for a profiler: the
// entries it launched, in launch order, and the cost model's HBM bytes.
type ProfiledKernel struct {
	Plan     string   `json:"plan"`
	Kernel   string   `json:"kernel"`
	Strategy string   `json:"strategy"`
	Entries  []string `json:"entries"`
	// ModelRead and ModelWritten are plan.Costs' compulsory HBM bytes.
	ModelRead    int64 `json:"model_read"`
	ModelWritten int64 `json:"model_written"`
	// Skipped is why the kernel did not run (codegen/cuda's error).
	Skipped string `json:"skipped,omitempty"`
}

// Once runs every generated kernel of l once, in plan order, on freshly
// uploaded leaves and a zeroed arena, and returns what it launched. Under a
// profiler (ncu) the kernels' launches follow the returned order, so
// measured counters can be matched to the model kernel by kernel.
func (b *Bench) Once(l *Loaded, leaves *Reference) ([]ProfiledKernel, error) {
	p := l.P
	costs, err := p.Plan.Costs(p.Dims)
	if err != nil {
		return nil, err
	}
	in, err := l.Prepare(leaves)
	if err != nil {
		return nil, err
	}
	defer in.Free()
	var out []ProfiledKernel
	for i, k := range p.Kernels {
		pk := ProfiledKernel{Plan: PlanName(p.Fused), Kernel: k.Plan.Name, Strategy: k.Plan.Strategy.String(),
			ModelRead: costs[i].BytesRead, ModelWritten: costs[i].BytesWritten}
		if !l.Generated(i) {
			pk.Skipped = k.Err.Error()
		} else {
			for _, e := range l.entries[i] {
				pk.Entries = append(pk.Entries, e.Name)
			}
			if err := l.Launch(in, i, b.D.Stream); err != nil {
				return nil, fmt.Errorf("%s: %w", k.Plan.Name, err)
			}
		}
		out = append(out, pk)
	}
	return out, b.D.Stream.Synchronize()
}
