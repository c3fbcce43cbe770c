package gpu

import (
	"fmt"

	"github.com/fuser-dev/fuser/specs"
	"github.com/fuser-dev/fuser/specs/testlayers"
)

// The on-device tests of the CUDA-graph ladder (ladder_test.go) load the
// plans below; gpukernels compiles their kernels into the bundle.

// LadderLlamaDims is the decode step of the default spec at full size whose
// graph step must equal the eager step bit for bit in one launch.
var LadderLlamaDims = map[string]int64{"B": 1, "S": 1, "T": 4096}

// LadderPaged is the shrunk paged_decode the ladder test pads batches of
// 1, 3 and 5 sequences in, to buckets 1, 4 and 8: pages of 16 tokens, at
// most T+S = 65 tokens (5 pages) per sequence; a pool of 40 pages for the
// sequences plus page 40, the padding's scratch page; 48 page ids, room
// for 5 pages of 8 sequences and a padded sequence's one.
var (
	LadderPagedDims    = map[string]int64{"B": 8, "S": 1, "T": 64, "P": 41, "N": 48}
	LadderPagedBuckets = []int{1, 4, 8}
)

// LadderPlans are the fused plans of the ladder tests: Llama-3-8B at
// LadderLlamaDims, the shrunk paged_decode at LadderPagedDims.
func LadderPlans() (llama, paged *Plan, err error) {
	full, err := Case{Spec: specs.Default, Full: true}.Graph()
	if err != nil {
		return nil, nil, err
	}
	if llama, err = NewPlan(full, LadderLlamaDims, true); err != nil {
		return nil, nil, fmt.Errorf("ladder %s: %w", specs.Default, err)
	}
	small, err := testlayers.Small("paged_decode")
	if err != nil {
		return nil, nil, err
	}
	if paged, err = NewPlan(small, LadderPagedDims, true); err != nil {
		return nil, nil, fmt.Errorf("ladder paged_decode: %w", err)
	}
	return llama, paged, nil
}
