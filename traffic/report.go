// Package traffic compares the fused and unfused plans of a layer: kernel by
// kernel HBM bytes, FLOPs and launches, the totals, their ratio and the
// traffic floor. The CLI prints its reports; fusertest wraps Compare for
// tests.
package traffic

import (
	"github.com/fuser-dev/fuser/codegen/cuda"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// Report is the traffic of both plans of one graph at bound dims.
type Report struct {
	Dims map[string]int64 `json:"dims"`
	// Fused and Unfused are the step's kernels of each plan.
	Fused   []plan.Cost `json:"fused"`
	Unfused []plan.Cost `json:"unfused"`
	// FusedTotal and UnfusedTotal sum the step's kernels of each plan.
	FusedTotal   plan.Cost `json:"fused_total"`
	UnfusedTotal plan.Cost `json:"unfused_total"`
	// Load are the fused plan's load-stage kernels, which run once after
	// the weights are loaded, and LoadTotal their sum; the step's numbers
	// leave them out.
	Load      []plan.Cost `json:"load,omitempty"`
	LoadTotal plan.Cost   `json:"load_total"`
	// Floor is every param, input and cached token read once and every new
	// token and output written once.
	Floor int64 `json:"floor_bytes"`
	// Plans are the plans themselves.
	FusedPlan   *plan.Plan `json:"-"`
	UnfusedPlan *plan.Plan `json:"-"`
}

// Ratio is unfused bytes over fused bytes: how many times less the fused
// plan moves.
func (r *Report) Ratio() float64 {
	return float64(r.UnfusedTotal.Bytes()) / float64(r.FusedTotal.Bytes())
}

// OverFloor is the fused plan's bytes over the floor.
func (r *Report) OverFloor() float64 { return float64(r.FusedTotal.Bytes()) / float64(r.Floor) }

// Compare plans g both ways at the dims and models their traffic.
func Compare(g *ir.Graph, dims map[string]int64) (*Report, error) {
	r := &Report{Dims: dims}
	for _, side := range []struct {
		pipeline []passes.Pass
		costs    *[]plan.Cost
		total    *plan.Cost
		plan     **plan.Plan
	}{
		{passes.Fused, &r.Fused, &r.FusedTotal, &r.FusedPlan},
		{passes.Unfused, &r.Unfused, &r.UnfusedTotal, &r.UnfusedPlan},
	} {
		st, err := passes.Run(g, side.pipeline, passes.Options{Dims: dims, Check: cuda.Emittable, GemmWGMMA: cuda.GemmWGMMA, GemvTiles: cuda.GemvTiles, GemvCols: cuda.GemvCols})
		if err != nil {
			return nil, err
		}
		cs, err := st.Plan.Costs(dims)
		if err != nil {
			return nil, err
		}
		*side.plan = st.Plan
		*side.total = plan.Total(cs)
		for _, c := range cs {
			if c.Load {
				r.Load = append(r.Load, c)
			} else {
				*side.costs = append(*side.costs, c)
			}
		}
	}
	r.LoadTotal = plan.LoadTotal(r.Load)
	floor, err := plan.Floor(g, dims)
	if err != nil {
		return nil, err
	}
	r.Floor = floor
	return r, nil
}
