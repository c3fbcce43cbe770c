package gpu

import (
	"encoding/binary"
	"fmt"
	"math"
)

// KernelSpan is one kernel of a step replayed as a CUDA graph, on the
// timeline of its blocks (codegen/cuda's timeline probes): µs from the
// step's first block entry to the kernel's first block entry, to the first
// and the last block passing fz_grid_sync (where a dependent launch waits
// for the kernel before it), and to the last block's return. The global
// timer's resolution bounds their precision.
type KernelSpan struct {
	Name        string  `json:"name"`
	EnterUs     float64 `json:"enter_us"`
	SyncFirstUs float64 `json:"sync_first_us"`
	SyncLastUs  float64 `json:"sync_last_us"`
	ExitUs      float64 `json:"exit_us"`
}

// Timeline is the kernels of one graph replay of a step, the replay whose
// span (first entry to last return) is the median of the reps.
type Timeline struct {
	SpanUs  float64      `json:"span_us"`
	Kernels []KernelSpan `json:"kernels"`
}

// timelineReset is fz_timeline before a step: first entry and first
// passage at the largest time, last passage and last return at zero.
var timelineReset = func() []byte {
	b := make([]byte, 32)
	binary.LittleEndian.PutUint64(b[0:], math.MaxUint64)
	binary.LittleEndian.PutUint64(b[8:], math.MaxUint64)
	return b
}()

// spans turns the probe times (ns: first entry, first and last passage,
// last return) of the step's kernels, names, into a Timeline from the
// step's first entry. A kernel whose probes were not all written is an
// error.
func spans(names []string, times [][4]uint64) (*Timeline, error) {
	start := uint64(math.MaxUint64)
	var end uint64
	for i, t := range times {
		if t[0] == math.MaxUint64 || t[1] == math.MaxUint64 || t[2] == 0 || t[3] == 0 || t[0] > t[1] || t[1] > t[2] || t[2] > t[3] {
			return nil, fmt.Errorf("timeline %s: probes %v not written in order", names[i], t)
		}
		start, end = min(start, t[0]), max(end, t[3])
	}
	us := func(ns uint64) float64 { return float64(ns-start) / 1e3 }
	tl := &Timeline{SpanUs: us(end)}
	for i, t := range times {
		tl.Kernels = append(tl.Kernels, KernelSpan{Name: names[i], EnterUs: us(t[0]), SyncFirstUs: us(t[1]), SyncLastUs: us(t[2]), ExitUs: us(t[3])})
	}
	return tl, nil
}
