package cuda

import "testing"

// TestSegmentVec64 checks which segments' 64-slot groups of a 256-slot tile
// are 64 contiguous columns (the tensor copy engine's boxes): runs of a
// multiple of 64 bases or one run, and an offset's slots a multiple of 64
// wide; not runs of 32 (a head of 32 columns every 128) or three offsets
// (80 slots each).
func TestSegmentVec64(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    segment
		want bool
	}{
		{"one run", segment{runLen: 4097, nRuns: 1, offs: []int64{0}}, true},
		{"runs of 128", segment{runLen: 128, runStride: 384, nRuns: 32, offs: []int64{0}}, true},
		{"halves", segment{runLen: 14336, nRuns: 1, offs: []int64{0, 14336}}, true},
		{"symbolic N", segment{runLen: 1, nRuns: 1, offs: []int64{0}, symN: true}, true},
		{"runs of 32", segment{runLen: 32, runStride: 128, nRuns: 8, offs: []int64{0}}, false},
		{"three offsets", segment{runLen: 64, nRuns: 1, offs: []int64{0, 64, 128}}, false},
	} {
		if got := tc.s.vec64(gemvRowTN); got != tc.want {
			t.Errorf("%s: vec64 %v, want %v", tc.name, got, tc.want)
		}
	}
}
