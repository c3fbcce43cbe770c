package main

import (
	"fmt"
	"strings"
	"time"
)

// phases times the steps of a fuser bench run (building the plans, the
// random inputs, each plan's measurement, the timeline), so that a device
// call's budget can be spent knowingly: a bench of three decode dims takes
// over a minute, and the table does not say where.
type phases struct {
	now   func() time.Time
	last  time.Time
	names []string
	durs  []time.Duration
}

// newPhases starts the clock at now().
func newPhases(now func() time.Time) *phases {
	return &phases{now: now, last: now()}
}

// mark ends the phase called name: the time since the previous mark (or
// the start).
func (p *phases) mark(name string) {
	t := p.now()
	p.names = append(p.names, name)
	p.durs = append(p.durs, t.Sub(p.last))
	p.last = t
}

// String lists the phases marked so far and their total, in seconds:
// "plans 0.4 s, inputs 3.1 s; total 3.5 s".
func (p *phases) String() string {
	var b strings.Builder
	var total time.Duration
	for i, n := range p.names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.1f s", n, p.durs[i].Seconds())
		total += p.durs[i]
	}
	fmt.Fprintf(&b, "; total %.1f s", total.Seconds())
	return b.String()
}
