// Package fusertest holds the helpers for users' tests of a layer spec:
// Traffic plans it fused and unfused and returns traffic.Compare's report,
// failing the test on any error.
package fusertest

import (
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/traffic"
)

// Traffic parses a spec, plans it fused and unfused at the dims and returns
// the report; any error fails the test.
func Traffic(t testing.TB, src string, dims map[string]int64) *traffic.Report {
	t.Helper()
	g, err := frontend.Parse("spec.fu", src)
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	r, err := traffic.Compare(g, dims)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return r
}
