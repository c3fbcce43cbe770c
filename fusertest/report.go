// Package fusertest compares the fused and unfused plans of a layer spec:
// kernel by kernel HBM bytes, FLOPs and launches, the totals, their ratio
// and the traffic floor. Traffic is the helper for users' tests.
package fusertest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// Report is the traffic of both plans of one spec at bound dims.
type Report struct {
	Dims    map[string]int64 `json:"dims"`
	Fused   []plan.Cost      `json:"fused"`
	Unfused []plan.Cost      `json:"unfused"`
	// FusedTotal and UnfusedTotal sum the kernels of each plan.
	FusedTotal   plan.Cost `json:"fused_total"`
	UnfusedTotal plan.Cost `json:"unfused_total"`
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
		st, err := passes.Run(g, side.pipeline, passes.Options{Dims: dims})
		if err != nil {
			return nil, err
		}
		cs, err := st.Plan.Costs(dims)
		if err != nil {
			return nil, err
		}
		*side.costs, *side.total, *side.plan = cs, plan.Total(cs), st.Plan
	}
	floor, err := plan.Floor(g, dims)
	if err != nil {
		return nil, err
	}
	r.Floor = floor
	return r, nil
}

// Traffic parses a spec, plans it fused and unfused at the dims and returns
// the report; any error fails the test.
func Traffic(t testing.TB, src string, dims map[string]int64) *Report {
	t.Helper()
	g, err := frontend.Parse("spec.fu", src)
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	r, err := Compare(g, dims)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return r
}

// Table prints both plans kernel by kernel, the totals, the ratio and the
// floor.
func (r *Report) Table() string {
	var b strings.Builder
	for _, side := range []struct {
		name  string
		costs []plan.Cost
		total plan.Cost
	}{{"fused", r.Fused, r.FusedTotal}, {"unfused", r.Unfused, r.UnfusedTotal}} {
		fmt.Fprintf(&b, "%s plan: %d kernels, %d launches\n", side.name, len(side.costs), side.total.Launches)
		fmt.Fprintf(&b, "  %-44s %14s %14s %12s %14s %3s\n", "kernel", "read B", "written B", "L2 B", "FLOPs", "L")
		for _, c := range append(side.costs, side.total) {
			fmt.Fprintf(&b, "  %-44s %14d %14d %12d %14d %3d\n", c.Kernel, c.BytesRead, c.BytesWritten, c.L2Bytes, c.Flops, c.Launches)
		}
	}
	fmt.Fprintf(&b, "unfused/fused bytes: %.2fx   launches: %d → %d\n", r.Ratio(), r.UnfusedTotal.Launches, r.FusedTotal.Launches)
	fmt.Fprintf(&b, "floor (params + inputs + KV cache read once, new tokens + outputs written once): %d B; fused is %.3fx the floor\n", r.Floor, r.OverFloor())
	return b.String()
}
