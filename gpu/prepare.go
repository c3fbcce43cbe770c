package gpu

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/fuser-dev/fuser/codegen/cuda"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// Arch is the architecture the kernel images are built for: the default
// target's (plan.H200).
var Arch = plan.H200.Arch

// Plan is a layer planned at bound dims with the CUDA of each kernel.
type Plan struct {
	Graph *ir.Graph
	// Dims are the bound dims, derived page-pool dims included.
	Dims  map[string]int64
	Fused bool
	// Target is the GPU the plan is sized for.
	Target plan.Target
	Plan   *plan.Plan
	// Kernels follow Plan.Kernels.
	Kernels []*Kernel
}

// Kernel is one plan kernel and its CUDA: a module of its own, so that a
// kernel codegen/cuda cannot generate yet leaves the others runnable, and
// kernels equal across cases share one compiled image.
type Kernel struct {
	Plan *plan.Kernel
	// Err is codegen/cuda's error when it cannot generate the kernel; the
	// other fields are then empty.
	Err error
	// Source is the module's CUDA source, and Key the name of its compiled
	// image (see Images).
	Source string
	Key    string
	// CUDA describes the entries, parameters and block.
	CUDA cuda.Kernel
}

// Generated reports whether codegen/cuda generated every kernel.
func (p *Plan) Generated() bool {
	for _, k := range p.Kernels {
		if k.Err != nil {
			return false
		}
	}
	return true
}

// NotGenerated names the kernels codegen/cuda did not generate, joined by
// commas.
func (p *Plan) NotGenerated() string {
	var names []string
	for _, k := range p.Kernels {
		if k.Err != nil {
			names = append(names, k.Plan.Name)
		}
	}
	return strings.Join(names, ", ")
}

// Results are the values a step of g leaves its caller: the outputs, then
// the states an append writes.
func Results(g *ir.Graph) []*ir.Value {
	out := slices.Clone(g.Outputs)
	for _, s := range g.States {
		if g.AppendOf(s) != nil {
			out = append(out, s)
		}
	}
	return out
}

// Results are p's results (Results) as its device buffers (Layout) know
// them: values of p.Plan.Graph, the passes' own copy of p.Graph, whose
// values have no buffer.
func (p *Plan) Results() []*ir.Value { return Results(p.Plan.Graph) }

// PlanName is "fused" or "unfused".
func PlanName(fused bool) string {
	if fused {
		return "fused"
	}
	return "unfused"
}

// NewPlan plans g at dims (completed with interp.DeriveDims) for the
// default target (plan.H200) and generates each kernel's CUDA.
func NewPlan(g *ir.Graph, dims map[string]int64, fused bool) (*Plan, error) {
	return NewPlanSplit(g, dims, fused, 0, plan.H200)
}

// NewPlanSplit is NewPlan for target t with decode attention's split size
// fixed at splitKeys keys when positive (passes.Options.DecodeSplitKeys:
// the deterministic mode).
func NewPlanSplit(g *ir.Graph, dims map[string]int64, fused bool, splitKeys int64, t plan.Target) (*Plan, error) {
	full, _, err := interp.DeriveDims(g, dims)
	if err != nil {
		return nil, err
	}
	pipeline := passes.Unfused
	if fused {
		pipeline = passes.Fused
	}
	st, err := passes.Run(g, pipeline, passes.Options{Dims: full, Target: t, DecodeSplitKeys: splitKeys, Check: cuda.Emittable, GemmWGMMA: cuda.GemmWGMMA, GemvTiles: cuda.GemvTiles, GemvCols: cuda.GemvCols})
	if err != nil {
		return nil, fmt.Errorf("%s plan: %w", PlanName(fused), err)
	}
	p := &Plan{Graph: g, Dims: full, Fused: fused, Target: t, Plan: st.Plan}
	for _, k := range st.Plan.Kernels {
		p.Kernels = append(p.Kernels, generate(st.Plan, k))
	}
	return p, nil
}

// Timeline is p with every kernel's module generated with the timeline
// probes (cuda.Options.Timeline): its own images, computing the same, for
// Bench.Timeline.
func (p *Plan) Timeline() *Plan {
	t := *p
	t.Kernels = nil
	for _, k := range p.Kernels {
		t.Kernels = append(t.Kernels, generateWith(p.Plan, k.Plan, cuda.Options{Timeline: true}))
	}
	return &t
}

// generate makes the one-kernel module of k.
func generate(p *plan.Plan, k *plan.Kernel) *Kernel { return generateWith(p, k, cuda.Options{}) }

// generateWith makes the one-kernel module of k with codegen options opt.
func generateWith(p *plan.Plan, k *plan.Kernel, opt cuda.Options) *Kernel {
	one := *p
	one.Kernels = []*plan.Kernel{k}
	m, err := cuda.GenerateWith(&one, opt)
	if err != nil {
		return &Kernel{Plan: k, Err: err}
	}
	if len(m.Kernels) != 1 || m.Kernels[0].Name != k.Name || len(m.Kernels[0].Entries) == 0 {
		return &Kernel{Plan: k, Err: fmt.Errorf("codegen/cuda: the module of %s describes %d kernels", k.Name, len(m.Kernels))}
	}
	return &Kernel{Plan: k, Source: m.Source, Key: ImageKey(m.Source), CUDA: m.Kernels[0]}
}

// ImageKey names the compiled image of a CUDA source for Arch.
func ImageKey(src string) string {
	sum := sha256.Sum256([]byte(Arch + "\x00" + src))
	return hex.EncodeToString(sum[:12])
}

// Sources returns the distinct module sources of the plans by key.
func Sources(plans ...*Plan) map[string]string {
	out := map[string]string{}
	for _, p := range plans {
		for _, k := range p.Kernels {
			if k.Err == nil {
				out[k.Key] = k.Source
			}
		}
	}
	return out
}
