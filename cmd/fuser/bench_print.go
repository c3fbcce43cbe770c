package main

import (
	"fmt"
	"io"

	"github.com/fuser-dev/fuser/gpu"
)

// benchTarget is one spec at one binding of its dims, as fuser bench
// measured it.
type benchTarget struct {
	Spec string           `json:"spec"`
	Dims map[string]int64 `json:"dims"`
	// SplitKeys is -split-keys (0: the launch plan's decode split).
	SplitKeys int64 `json:"split_keys,omitempty"`
	// KVBytes is the K and V bytes the attention kernel must read (a
	// cascade's shared prefix once).
	KVBytes int64         `json:"kv_bytes,omitempty"`
	Fused   gpu.PlanBench `json:"fused"`
	Unfused gpu.PlanBench `json:"unfused"`
	// Timeline is the fused step's kernels on one graph replay (-timeline).
	Timeline *gpu.Timeline `json:"timeline,omitempty"`
}

// printPlanBench prints one plan's kernels and step at t's dims.
func printPlanBench(w io.Writer, t benchTarget, pb gpu.PlanBench) {
	fmt.Fprintf(w, "\n%s %s plan at %s: %d launches, model %d B, %d FLOPs\n", t.Spec, pb.Plan, gpu.DimsString(t.Dims), pb.Step.Launches, pb.ModelBytes, pb.ModelFlops)
	fmt.Fprintf(w, "  %-36s %-7s %10s %8s %9s %6s %6s %9s %6s\n", "kernel", "variant", "median µs", "TB/s", "TFLOP/s", "%bw", "%flop", "floor µs", "floor/t")
	for _, k := range pb.Kernels {
		if k.Skipped != "" {
			fmt.Fprintf(w, "  %-36s %-7s skipped: %s\n", k.Name, k.Variant, k.Skipped)
			continue
		}
		load := ""
		if k.Load {
			load = "  load stage: once, not in the step"
		}
		fmt.Fprintf(w, "  %-36s %-7s %10.4g %8.3g %9.4g %6.1f %6.1f %9.4g %6.2f%s\n", k.Name, k.Variant, k.MedianUs, k.TBps, k.TFLOPs, 100*k.BWFrac, 100*k.FlopFrac, k.FloorUs, k.OfFloor, load)
	}
	if pb.Step.Skipped != "" {
		fmt.Fprintf(w, "  step: skipped (%s); the timed kernels sum to %.4g µs; floor %.4g µs\n", pb.Step.Skipped, pb.Step.KernelsSumUs, pb.Step.FloorUs)
	} else {
		fmt.Fprintf(w, "  step: eager %.4g µs, graph replay %.4g µs (kernels sum %.4g µs, floor %.4g µs)\n", pb.Step.EagerUs, pb.Step.GraphUs, pb.Step.KernelsSumUs, pb.Step.FloorUs)
	}
}
