package main

import (
	"fmt"
	"io"

	"github.com/fuser-dev/fuser/gpu"
)

// printTimeline writes fuser bench -timeline's table: each kernel of one
// graph replay, µs from the step's first block entry; "handoff" is from
// the kernel before it's last return to this kernel's first block passing
// its wait (what the dependent launch leaves of the gap), "run" from that
// passage to this kernel's last return.
func printTimeline(w io.Writer, reps int, tl *gpu.Timeline) {
	fmt.Fprintf(w, "  timeline of one graph replay (median span of %d; µs from the first block entry):\n", reps)
	fmt.Fprintf(w, "  %-36s %8s %10s %10s %8s %8s %8s\n", "kernel", "enter", "sync first", "sync last", "exit", "handoff", "run")
	prev := 0.0
	for i, k := range tl.Kernels {
		handoff := "-"
		if i > 0 {
			handoff = fmt.Sprintf("%.1f", k.SyncFirstUs-prev)
		}
		fmt.Fprintf(w, "  %-36s %8.1f %10.1f %10.1f %8.1f %8s %8.1f\n", k.Name, k.EnterUs, k.SyncFirstUs, k.SyncLastUs, k.ExitUs, handoff, k.ExitUs-k.SyncFirstUs)
		prev = k.ExitUs
	}
	fmt.Fprintf(w, "  span %.1f µs\n", tl.SpanUs)
}
