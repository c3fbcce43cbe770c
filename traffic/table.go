package traffic

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/plan"
)

// Table prints both plans' steps kernel by kernel, the totals, the ratio
// and the floor, then the fused plan's load stage when it has one.
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
	if len(r.Load) > 0 {
		fmt.Fprintf(&b, "load stage (once after the weights are loaded, not in the step): %d kernels, %d launches\n", len(r.Load), r.LoadTotal.Launches)
		for _, c := range append(r.Load, r.LoadTotal) {
			fmt.Fprintf(&b, "  %-44s %14d %14d %12d %14d %3d\n", c.Kernel, c.BytesRead, c.BytesWritten, c.L2Bytes, c.Flops, c.Launches)
		}
	}
	return b.String()
}
