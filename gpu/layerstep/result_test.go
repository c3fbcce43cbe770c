package layerstep

import (
	"math"
	"strings"
	"testing"
)

func TestInstanceBytes(t *testing.T) {
	pj := `{"layer": "l", "inputs": [{"ref": "%1.x", "bytes": 100}], "params": [{"bytes": 1000}, {"bytes": 24}],
		"states": [{"bytes": 7}], "outputs": [{"bytes": 3}], "arena": {"size": 4096, "buffers": []}}`
	n, err := InstanceBytes([]byte(pj))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(100 + 1000 + 24 + 7 + 3 + 4096); n != want {
		t.Errorf("InstanceBytes = %d, want %d", n, want)
	}
	for _, bad := range []string{`{"inputs": []}`, `not json`} {
		if _, err := InstanceBytes([]byte(bad)); err == nil {
			t.Errorf("InstanceBytes(%q): no error", bad)
		}
	}
}

func TestAgainst(t *testing.T) {
	bench := `{"targets": [
		{"spec": "llama3_8b", "dims": {"B": 1, "S": 1, "T": 4096}, "split_keys": 128, "fused": {"step": {"graph_us": 150}}},
		{"spec": "llama3_8b", "dims": {"B": 1, "S": 1, "T": 4096}, "fused": {"step": {"graph_us": 144}}},
		{"spec": "llama3_8b", "dims": {"B": 16, "S": 1, "T": 4096}, "fused": {"step": {"graph_us": 216}}},
		{"spec": "tiny", "dims": {"B": 2}, "fused": {"step": {}}}]}`
	r := Result{Spec: "llama3_8b", Dims: map[string]int64{"B": 1, "S": 1, "T": 4096}, GraphUs: 151.2}
	if err := Against(&r, []byte(bench)); err != nil {
		t.Fatal(err)
	}
	// The launch plan's split (split_keys 0), not the fixed one.
	if r.BenchGraphUs != 144 || !(math.Abs(r.Ratio-1.05) < 1e-12) {
		t.Errorf("Against: bench %v ratio %v, want 144 and 1.05", r.BenchGraphUs, r.Ratio)
	}
	for _, c := range []struct {
		r    Result
		want string
	}{
		{Result{Spec: "llama3_8b", Dims: map[string]int64{"B": 64, "S": 1, "T": 4096}, GraphUs: 1}, "no fused step"},
		{Result{Spec: "llama3_8b", Dims: map[string]int64{"B": 1, "S": 1}, GraphUs: 1}, "no fused step"},
		{Result{Spec: "tiny", Dims: map[string]int64{"B": 2}, GraphUs: 1}, "no graph step"},
	} {
		err := Against(&c.r, []byte(bench))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Against(%s %v) = %v, want an error saying %q", c.r.Spec, c.r.Dims, err, c.want)
		}
	}
}
