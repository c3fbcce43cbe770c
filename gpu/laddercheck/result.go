package laddercheck

import (
	"encoding/json"
	"fmt"
	"os"
)

// Result is what the check found of one target.
type Result struct {
	Target  string           `json:"target"`
	Spec    string           `json:"spec"`
	Dims    map[string]int64 `json:"dims"`
	Buckets []int            `json:"buckets"`
	// Captured are the kernel launches the ladder's capture recorded.
	Captured int64        `json:"captured"`
	Steps    []StepResult `json:"steps"`
	// Failures are every check that failed, each saying where.
	Failures []string `json:"failures"`
}

// StepResult is one graph step and its eager references.
type StepResult struct {
	Step    string `json:"step"`
	Lengths []int  `json:"lengths"`
	Bucket  int    `json:"bucket"`
	// Launches, Graphs and Copies are what the graph step enqueued on the
	// Layer's stream: one launch, a graph, and the inputs' copies.
	Launches int64 `json:"launches"`
	Graphs   int64 `json:"graphs"`
	Copies   int64 `json:"copies"`
	// EagerLaunches are the kernels of the eager step at the bucket.
	EagerLaunches int64 `json:"eager_launches"`
	// PaddedBytes are the bytes compared with the eager step at the
	// bucket, UnpaddedBytes those compared with the eager step of the
	// batch alone (none when the batch fills its bucket).
	PaddedBytes   int64 `json:"padded_bytes"`
	UnpaddedBytes int64 `json:"unpadded_bytes"`
}

// fail records a failure.
func (r *Result) fail(err error) { r.Failures = append(r.Failures, err.Error()) }

// Failed reports whether any check of r failed, or r checked no step.
func (r *Result) Failed() bool { return len(r.Failures) > 0 || len(r.Steps) == 0 }

// Verdict is r in a line: its steps and whether they passed.
func (r *Result) Verdict() string {
	switch {
	case len(r.Failures) > 0:
		return fmt.Sprintf("FAIL %s: %d failures, first: %s", r.Target, len(r.Failures), r.Failures[0])
	case len(r.Steps) == 0:
		return fmt.Sprintf("FAIL %s: no step ran", r.Target)
	}
	var bytes int64
	for _, s := range r.Steps {
		bytes += s.PaddedBytes + s.UnpaddedBytes
	}
	return fmt.Sprintf("ok %s: %d graph steps of 1 launch each, equal to eager bit for bit (%d bytes compared)", r.Target, len(r.Steps), bytes)
}

// WriteResults writes rs to path as indented JSON.
func WriteResults(path string, rs []*Result) error {
	data, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("ladder check results: %w", err)
	}
	return nil
}
