package traffic_test

import (
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/internal/golden"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/specs"
	"github.com/fuser-dev/fuser/traffic"
)

// tiny parses the embedded tiny decoder layer.
func tiny(t *testing.T) *ir.Graph {
	t.Helper()
	name, src, ok := specs.Source("tiny")
	if !ok {
		t.Fatal("no embedded spec tiny")
	}
	g, err := frontend.Parse(name, src)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestTable: the report's table of both plans, the ratio and the floor, at
// a decode step of the tiny layer.
func TestTable(t *testing.T) {
	r, err := traffic.Compare(tiny(t), map[string]int64{"B": 2, "S": 1, "T": 9})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/tiny_decode.txt", r.Table())
}

// TestCompareNeedsDims: an unbound dim is an error, not a report.
func TestCompareNeedsDims(t *testing.T) {
	if r, err := traffic.Compare(tiny(t), map[string]int64{"B": 2, "S": 1}); err == nil {
		t.Errorf("Compare without T returned %v, want an error", r)
	}
}
