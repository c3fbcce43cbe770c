package gpu

import "testing"

// TestPlanBenchAdd checks that the load stage's kernels are listed but left
// out of the step's kernel sum and launches: the step runs without them.
func TestPlanBenchAdd(t *testing.T) {
	var pb PlanBench
	pb.add(KernelTime{Name: "k00_copy_concat", MedianUs: 150, Launches: 1, Load: true})
	pb.add(KernelTime{Name: "k01_gemm", MedianUs: 20, Launches: 1})
	pb.add(KernelTime{Name: "k02_attention", MedianUs: 7.5, Launches: 2})
	if len(pb.Kernels) != 3 {
		t.Fatalf("%d kernels listed, want 3", len(pb.Kernels))
	}
	if pb.Step.KernelsSumUs != 27.5 || pb.Step.Launches != 3 {
		t.Errorf("step sum %g µs over %d launches, want 27.5 over 3", pb.Step.KernelsSumUs, pb.Step.Launches)
	}
}
