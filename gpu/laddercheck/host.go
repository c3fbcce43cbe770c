package laddercheck

import (
	"fmt"
	"math/rand/v2"

	"github.com/fuser-dev/fuser/gpu"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/runtime"
)

// Step is one step the check runs: batch sequences of the given lengths
// (after the append) at a context, the bucket the ladder must pick for
// them, and the host inputs, following Layout.Inputs.
type Step struct {
	Context string
	Batch   int
	Bucket  int
	Lengths []int
	Host    [][]byte
}

// Name is the step as the check reports it.
func (s Step) Name() string {
	if s.Context == "" {
		return fmt.Sprintf("batch=%d", s.Batch)
	}
	return fmt.Sprintf("%s/batch=%d", s.Context, s.Batch)
}

// Steps draws t's steps from seed: at each context, each batch, the
// lengths uniform in the context's range, and their inputs (see Host).
// Every step's inputs are staged for its bucket here already, so that a
// step the ladder refuses is the ladder's failure.
func (l *Layout) Steps(t Target, seed uint64) ([]Step, error) {
	rng := rand.New(rand.NewPCG(seed, 7))
	contexts := t.Contexts
	if len(contexts) == 0 {
		n := int(t.Dims["T"] + t.Dims["S"])
		contexts = []Context{{Min: n, Max: n}}
	}
	var out []Step
	for _, c := range contexts {
		for _, batch := range t.Batches {
			lens := make([]int, batch)
			for i := range lens {
				lens[i] = c.Min + rng.IntN(c.Max-c.Min+1)
			}
			host, err := l.Host(rng, lens)
			if err != nil {
				return nil, err
			}
			bucket, err := runtime.PickBucket(t.Buckets, batch)
			if err != nil {
				return nil, err
			}
			if _, err := runtime.Stage(l.StepInputs(), l.Pages, batch, bucket, host); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", t.Name(), c.Name, err)
			}
			out = append(out, Step{Context: c.Name, Batch: batch, Bucket: bucket, Lengths: lens, Host: host})
		}
	}
	return out, nil
}

// Host is a step's host inputs for sequences of the given lengths (after
// the append): rows of values uniform in (-1, 1), rounded to the input's
// dtype; the positions of each sequence's new tokens (an i32 input with a
// row of S per sequence: its last S); and a page table of distinct pages
// drawn from the pool.
func (l *Layout) Host(rng *rand.Rand, lens []int) ([][]byte, error) {
	var indptr, ids, last []int32
	if pt := l.Pages; pt != nil {
		perm := rng.Perm(int(pt.Pages))
		indptr = append(indptr, 0)
		for _, n := range lens {
			np := (n + int(pt.Page) - 1) / int(pt.Page)
			if np > len(perm) {
				return nil, fmt.Errorf("sequences of %v tokens need more than the pool's %d pages", lens, pt.Pages)
			}
			for _, p := range perm[:np] {
				ids = append(ids, int32(p))
			}
			perm = perm[np:]
			indptr = append(indptr, int32(len(ids)))
			last = append(last, int32(n-(np-1)*int(pt.Page)))
		}
	}
	host := make([][]byte, len(l.Inputs))
	for i, in := range l.Inputs {
		switch {
		case in.Kind == runtime.PageIndptr:
			host[i] = runtime.AsBytes(indptr)
		case in.Kind == runtime.PageIDs:
			host[i] = runtime.AsBytes(ids)
		case in.Kind == runtime.PageLast:
			host[i] = runtime.AsBytes(last)
		case in.DType == ir.I32:
			s := int(in.RowBytes / 4)
			var pos []int32
			for _, n := range lens {
				for j := range s {
					pos = append(pos, int32(n-s+j))
				}
			}
			host[i] = runtime.AsBytes(pos)
		default:
			vals := make([]float64, int(in.RowBytes/in.DType.Size())*len(lens))
			for j := range vals {
				vals[j] = 2*rng.Float64() - 1
			}
			host[i] = gpu.Encode(vals, in.DType)
		}
	}
	return host, nil
}
