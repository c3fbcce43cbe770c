package main

import (
	"testing"
	"time"
)

// TestPhases checks that each phase is the time since the mark before it
// and that the total is their sum, on a clock the test advances.
func TestPhases(t *testing.T) {
	at := time.Unix(100, 0)
	p := newPhases(func() time.Time { return at })
	at = at.Add(400 * time.Millisecond)
	p.mark("plans")
	at = at.Add(3100 * time.Millisecond)
	p.mark("inputs")
	at = at.Add(12 * time.Second)
	p.mark("fused")
	want := "plans 0.4 s, inputs 3.1 s, fused 12.0 s; total 15.5 s"
	if got := p.String(); got != want {
		t.Fatalf("phases: got %q, want %q", got, want)
	}
}
