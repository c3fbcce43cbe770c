package main

import (
	"fmt"

	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
)

const (
	benchUsage = "bench SPEC -dims B=1,S=1,T=4096 [-dims ...] [-kernels DIR] [-reps N] [-warmup N] [-seed N] [-split-keys N] [-unfused=false] [-dependent=false] [-timeline] [--json] [-json-out FILE]"
	benchDoc   = "time every kernel, fused and unfused, and the whole step eager and as a CUDA graph, against copy and GEMM ceilings measured in the same run (needs a GPU and a cuda build)"
)

const (
	profileUsage = "profile SPEC -dims B=1,S=1,T=4096 [-kernels DIR] [-seed N] [-json-out FILE]"
	profileDoc   = "run the fused, then the unfused step once, kernel by kernel, for a profiler such as ncu; print each kernel's entries and model bytes as JSON (needs a GPU and a cuda build)"
)

// benchDims parses one -dims argument of fuser bench against g: the dims
// as written and every dim bound, the page-pool dims (P, N) that the
// argument may leave out derived by interp.DeriveDims.
func benchDims(s string, g *ir.Graph) (dims, full map[string]int64, err error) {
	dims, err = parseDims(s, g)
	if err != nil {
		return nil, nil, err
	}
	full, _, err = interp.DeriveDims(g, dims)
	if err != nil {
		return nil, nil, &exitError{code: 2, err: fmt.Errorf("fuser bench: %w", err)}
	}
	if err := requireDims(full, g); err != nil {
		return nil, nil, err
	}
	return dims, full, nil
}
