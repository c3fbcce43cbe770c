package frontend_test

import (
	"testing"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/specs/testlayers"
)

// TestPackedMarkers builds the varlen layer (packed prompts over a ragged
// cache) and checks where its packed and ragged markers stand: the tokens
// stay packed through the norms, matmuls by weights, rope and the
// transposes; the scores pair each token with its own sequence's keys
// (ragged keys whose sequence is the token axis); the cache before the
// append holds each sequence's packed tokens fewer.
func TestPackedMarkers(t *testing.T) {
	g, err := testlayers.Varlen("small_ragged")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*ir.Value{}
	for _, n := range g.Nodes {
		for _, o := range n.Outs {
			if o.Name != "" {
				byName[o.Name] = o
			}
		}
	}
	indptr := byName["qo_indptr"]
	for _, tc := range []struct {
		name        string
		packed      int // the packed axis, -1 for none
		ragged      int // the ragged axis, -1 for none
		batch       int
		lessIndptr  bool
		shapeString string
	}{
		{"x", 0, -1, 0, false, "[N, 32]"},
		{"h", 0, -1, 0, false, "[N, 32]"},
		{"q", 1, -1, 0, false, "[4, N, 8]"},
		{"k", 1, -1, 0, false, "[2, N, 8]"},
		{"kv", -1, 3, 1, true, "[2, B, 2, T, 8]"},
		{"K", -1, 2, 0, false, "[B, 2, N + T, 8]"},
		{"s", 1, 2, 1, false, "[4, N, N + T]"},
		{"p", 1, 2, 1, false, "[4, N, N + T]"},
		{"a", 1, -1, 0, false, "[4, N, 8]"},
		{"y", 0, -1, 0, false, "[N, 32]"},
	} {
		v := byName[tc.name]
		if v == nil {
			t.Fatalf("no value %s", tc.name)
		}
		if got := v.Type.Shape.String(); got != tc.shapeString {
			t.Errorf("%s: shape %s, want %s", tc.name, got, tc.shapeString)
		}
		switch p := v.Packed; {
		case tc.packed < 0 && p != nil:
			t.Errorf("%s: packed on axis %d, want unpacked", tc.name, p.Axis)
		case tc.packed >= 0 && (p == nil || p.Axis != tc.packed || p.Indptr != indptr):
			t.Errorf("%s: packed %+v, want axis %d by qo_indptr", tc.name, p, tc.packed)
		}
		switch r := v.Ragged; {
		case tc.ragged < 0 && r != nil:
			t.Errorf("%s: ragged on axis %d, want none", tc.name, r.Axis)
		case tc.ragged >= 0 && (r == nil || r.Axis != tc.ragged || r.Batch != tc.batch || (r.Less == indptr) != tc.lessIndptr):
			t.Errorf("%s: ragged %+v, want axis %d, sequence axis %d, less by qo_indptr %v", tc.name, r, tc.ragged, tc.batch, tc.lessIndptr)
		}
	}
}
