package main

const (
	benchUsage = "bench SPEC -dims B=1,S=1,T=4096 [-dims ...] [-kernels DIR] [-reps N] [-warmup N] [-seed N] [-split-keys N] [-unfused=false] [-dependent=false] [-timeline] [--json] [-json-out FILE]"
	benchDoc   = "time every kernel, fused and unfused, and the whole step eager and as a CUDA graph, against copy and GEMM ceilings measured in the same run (needs a GPU and a cuda build)"
)

const (
	profileUsage = "profile SPEC -dims B=1,S=1,T=4096 [-kernels DIR] [-seed N] [-json-out FILE]"
	profileDoc   = "run the fused, then the unfused step once, kernel by kernel, for a profiler such as ncu; print each kernel's entries and model bytes as JSON (needs a GPU and a cuda build)"
)
