//go:build cuda

package runtime

// #include <cuda.h>
// static CUresult copyHtoDAsync(CUdeviceptr dst, const void* src, size_t n, CUstream s) { return cuMemcpyHtoDAsync(dst, src, n, s); }
import "C"

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"
)

// CopyHtoDAsync copies src to dst, enqueued on s. src is pageable Go
// memory: the driver stages it before returning, so the caller may reuse
// src at once (the copy itself is ordered on s).
func CopyHtoDAsync(dst DevicePtr, src []byte, s *Stream) error {
	if len(src) == 0 {
		return nil
	}
	s.counts.Copies++
	return check(C.copyHtoDAsync(C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)), s.c()), "copy to device")
}

// LadderSpec is what a ladder is made of: its buckets (see Buckets), the
// step inputs and the static buffers they are copied into (Buffers[i] for
// Inputs[i]), and the paged cache's table, when there is one.
type LadderSpec struct {
	Buckets []int
	Inputs  []StepInput
	Buffers []Buffer
	Pages   *PageTable
}

// Ladder is a CUDA graph per bucket of a layer's step, over the layer's
// static buffers. It holds the buffers' addresses from the capture on: a
// step copies into those and replays, and nothing sets them again, so a
// graph never runs over other addresses than those it was captured with.
type Ladder struct {
	stream *Stream
	spec   LadderSpec
	graphs []*GraphExec // follow spec.Buckets
}

// NewLadder captures, on s, capture(bucket) into one graph per bucket.
func NewLadder(s *Stream, spec LadderSpec, capture func(bucket int) error) (*Ladder, error) {
	if len(spec.Buckets) == 0 || !slices.IsSorted(spec.Buckets) {
		return nil, fmt.Errorf("runtime: ladder buckets %v: want a sorted, non-empty list", spec.Buckets)
	}
	if len(spec.Buffers) != len(spec.Inputs) {
		return nil, fmt.Errorf("runtime: ladder of %d inputs with %d buffers", len(spec.Inputs), len(spec.Buffers))
	}
	for i, in := range spec.Inputs {
		if b := spec.Buffers[i]; b.Ptr == 0 || b.Bytes < in.Bytes {
			return nil, fmt.Errorf("runtime: ladder input %s: a buffer of %d bytes at %#x for %d", in.Name, b.Bytes, b.Ptr, in.Bytes)
		}
	}
	l := &Ladder{stream: s, spec: spec}
	l.spec.Buckets = slices.Clone(spec.Buckets)
	l.spec.Inputs = slices.Clone(spec.Inputs)
	l.spec.Buffers = slices.Clone(spec.Buffers)
	for _, b := range l.spec.Buckets {
		e, err := Capture(s, func() error { return capture(b) })
		if err != nil {
			return nil, errors.Join(fmt.Errorf("runtime: ladder bucket %d: %w", b, err), l.Destroy())
		}
		l.graphs = append(l.graphs, e)
	}
	return l, nil
}

// Buckets are the ladder's batch sizes.
func (l *Ladder) Buckets() []int { return slices.Clone(l.spec.Buckets) }

// Step enqueues one step of batch sequences on the ladder's stream: the
// host inputs (host[i] for the spec's Inputs[i]) copied into the static
// buffers and padded to the smallest bucket that holds batch (see Stage),
// then that bucket's graph: one launch. It returns the bucket. It checks
// everything before it enqueues anything.
func (l *Ladder) Step(batch int, host ...[]byte) (int, error) {
	if l.graphs == nil {
		return 0, errors.New("runtime: step on a destroyed ladder")
	}
	bucket, err := PickBucket(l.spec.Buckets, batch)
	if err != nil {
		return 0, err
	}
	copies, err := Stage(l.spec.Inputs, l.spec.Pages, batch, bucket, host)
	if err != nil {
		return 0, err
	}
	for _, c := range copies {
		buf := l.spec.Buffers[c.Input]
		if err := CopyHtoDAsync(buf.Ptr, c.Data, l.stream); err != nil {
			return 0, fmt.Errorf("runtime: step input %s: %w", l.spec.Inputs[c.Input].Name, err)
		}
		if c.Zero > 0 {
			if err := MemsetAsync(buf.At(int64(len(c.Data))), 0, c.Zero, l.stream); err != nil {
				return 0, fmt.Errorf("runtime: step input %s: %w", l.spec.Inputs[c.Input].Name, err)
			}
		}
	}
	i, _ := slices.BinarySearch(l.spec.Buckets, bucket)
	if err := l.graphs[i].Launch(l.stream); err != nil {
		return 0, fmt.Errorf("runtime: step of bucket %d: %w", bucket, err)
	}
	return bucket, nil
}

// Destroy releases the graphs.
func (l *Ladder) Destroy() error {
	var errs []error
	for _, e := range l.graphs {
		errs = append(errs, e.Destroy())
	}
	l.graphs = nil
	return errors.Join(errs...)
}
