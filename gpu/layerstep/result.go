package layerstep

import (
	"encoding/json"
	"fmt"
)

// Result is one target's step times in µs.
type Result struct {
	Spec     string           `json:"spec"`
	Dims     map[string]int64 `json:"dims"`
	Rotation int              `json:"rotation"`
	EagerUs  float64          `json:"eager_us"`
	GraphUs  float64          `json:"graph_us"`
	// BenchGraphUs is fuser bench's graph step of the same spec and dims
	// (-against), Ratio GraphUs over it.
	BenchGraphUs float64 `json:"bench_graph_us,omitempty"`
	Ratio        float64 `json:"ratio,omitempty"`
}

// planFile is the part of plan.json (codegen/build) InstanceBytes reads.
type planFile struct {
	Inputs, Params, States, Outputs []struct {
		Bytes int64 `json:"bytes"`
	}
	Arena struct {
		Size int64 `json:"size"`
	} `json:"arena"`
}

// InstanceBytes is the device memory one instance of a built layer holds,
// from its plan.json: its inputs, params, states, outputs and arena.
func InstanceBytes(planJSON []byte) (int64, error) {
	var p planFile
	if err := json.Unmarshal(planJSON, &p); err != nil {
		return 0, fmt.Errorf("plan.json: %w", err)
	}
	n := p.Arena.Size
	for _, vs := range [][]struct {
		Bytes int64 `json:"bytes"`
	}{p.Inputs, p.Params, p.States, p.Outputs} {
		for _, v := range vs {
			n += v.Bytes
		}
	}
	if n <= 0 {
		return 0, fmt.Errorf("plan.json: no buffers")
	}
	return n, nil
}

// benchFile is the part of `fuser bench -json-out` that Against reads.
type benchFile struct {
	Targets []struct {
		Spec      string           `json:"spec"`
		Dims      map[string]int64 `json:"dims"`
		SplitKeys int64            `json:"split_keys"`
		Fused     struct {
			Step struct {
				GraphUs float64 `json:"graph_us"`
			} `json:"step"`
		} `json:"fused"`
	} `json:"targets"`
}

// Against fills r's BenchGraphUs and Ratio from fuser bench's JSON: its
// fused graph step of r's spec and dims at the launch plan's split.
func Against(r *Result, benchJSON []byte) error {
	var b benchFile
	if err := json.Unmarshal(benchJSON, &b); err != nil {
		return fmt.Errorf("fuser bench JSON: %w", err)
	}
	for _, t := range b.Targets {
		if t.Spec != r.Spec || t.SplitKeys != 0 || !sameDims(t.Dims, r.Dims) {
			continue
		}
		if t.Fused.Step.GraphUs <= 0 {
			return fmt.Errorf("fuser bench JSON: %s at %v has no graph step", r.Spec, r.Dims)
		}
		r.BenchGraphUs = t.Fused.Step.GraphUs
		r.Ratio = r.GraphUs / r.BenchGraphUs
		return nil
	}
	return fmt.Errorf("fuser bench JSON: no fused step of %s at %v", r.Spec, r.Dims)
}

func sameDims(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
