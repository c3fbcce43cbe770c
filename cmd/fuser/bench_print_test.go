package main

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/gpu"
)

// TestPrintPlanBenchLoad checks that a load-stage kernel is marked as run
// once, outside the step, and that a step kernel is not.
func TestPrintPlanBenchLoad(t *testing.T) {
	pb := gpu.PlanBench{Plan: "fused", Kernels: []gpu.KernelTime{
		{Name: "k00_copy_concat", Variant: "copy", MedianUs: 150, Load: true},
		{Name: "k01_gemm_matmul", Variant: "gemv", MedianUs: 20},
	}, Step: gpu.StepTime{Launches: 1, EagerUs: 22, GraphUs: 21, KernelsSumUs: 20, FloorUs: 18}}
	var b strings.Builder
	printPlanBench(&b, benchTarget{Spec: "mistral_swa", Dims: map[string]int64{"B": 1}}, pb)
	lines := strings.Split(b.String(), "\n")
	var load, step string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "k00_copy_concat"):
			load = l
		case strings.Contains(l, "k01_gemm_matmul"):
			step = l
		}
	}
	if !strings.HasSuffix(load, "load stage: once, not in the step") {
		t.Errorf("load kernel's row %q is not marked", load)
	}
	if step == "" || strings.Contains(step, "load stage") {
		t.Errorf("step kernel's row %q missing or marked as the load stage", step)
	}
}
