package main

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/gpu"
)

// TestPrintTimeline checks the timeline table: the handoff of a kernel is
// from the previous kernel's last return to its first passage, the run
// from that passage to its last return; the first kernel has no handoff.
func TestPrintTimeline(t *testing.T) {
	tl := &gpu.Timeline{SpanUs: 9.75, Kernels: []gpu.KernelSpan{
		{Name: "k00_row", EnterUs: 0, SyncFirstUs: 0.5, SyncLastUs: 1.5, ExitUs: 3.5},
		{Name: "k01_gemm", EnterUs: 2.5, SyncFirstUs: 4, SyncLastUs: 4.5, ExitUs: 9.75},
	}}
	var b strings.Builder
	printTimeline(&b, 30, tl)
	got := b.String()
	for _, want := range []string{
		"median span of 30",
		"k00_row                                   0.0        0.5        1.5      3.5        -      3.0",
		"k01_gemm                                  2.5        4.0        4.5      9.8      0.5      5.8",
		"span 9.8 µs",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
}
