package gpu

import (
	"math"
	"strings"
	"testing"
)

// TestSpans checks the timeline arithmetic: times from the step's first
// entry in µs, and probes left unwritten or out of order refused (a
// kernel whose blocks never ran must not read as a zero-length span).
func TestSpans(t *testing.T) {
	p := []string{"k00", "k01"}
	tl, err := spans(p, [][4]uint64{{1_000_500, 1_001_000, 1_002_000, 1_004_000}, {1_003_000, 1_004_500, 1_005_000, 1_010_250}})
	if err != nil {
		t.Fatal(err)
	}
	want := []KernelSpan{{"k00", 0, 0.5, 1.5, 3.5}, {"k01", 2.5, 4, 4.5, 9.75}}
	if tl.SpanUs != 9.75 || len(tl.Kernels) != 2 || tl.Kernels[0] != want[0] || tl.Kernels[1] != want[1] {
		t.Errorf("spans: %+v, want span 9.75 and %+v", tl, want)
	}
	for _, bad := range [][4]uint64{
		{math.MaxUint64, math.MaxUint64, 0, 0}, // never ran: the reset values
		{1_000, 2_000, 3_000, 0},               // no return recorded
		{1_000, 3_000, 2_000, 4_000},           // first passage after the last
	} {
		if _, err := spans(p, [][4]uint64{{1_000, 1_100, 1_200, 1_300}, bad}); err == nil {
			t.Errorf("probes %v accepted", bad)
		}
	}
	if len(timelineReset) != 32 {
		t.Errorf("reset is %d bytes, want 32 (fz_timeline[4])", len(timelineReset))
	}
}

// TestPlanTimeline checks that a plan's timeline modules are its kernels'
// with the probes: the same entries and block, FZ_TIMELINE defined, and
// images of their own.
func TestPlanTimeline(t *testing.T) {
	p := llamaDecodePlan(t)
	tp := p.Timeline()
	if len(tp.Kernels) != len(p.Kernels) || tp.Plan != p.Plan {
		t.Fatalf("timeline plan has %d kernels of another plan, want the %d of this one", len(tp.Kernels), len(p.Kernels))
	}
	for i, k := range tp.Kernels {
		pk := p.Kernels[i]
		if k.Err != nil || k.Plan != pk.Plan || k.Key == pk.Key || !strings.Contains(k.Source, "#define FZ_TIMELINE\n") ||
			strings.Join(k.CUDA.Entries, ",") != strings.Join(pk.CUDA.Entries, ",") || k.CUDA.Block != pk.CUDA.Block {
			t.Errorf("%s: timeline kernel %+v does not mirror %+v with probes", pk.Plan.Name, k.CUDA, pk.CUDA)
		}
	}
}
