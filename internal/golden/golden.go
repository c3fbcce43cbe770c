// Package golden compares test output with files under testdata; run the
// tests with -update to rewrite the files from the current output.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Check compares got with the file at path (relative to the test's package),
// or rewrites the file when -update is set. A mismatch is reported as a
// line diff (-want +got).
func Check(t testing.TB, path, got string) {
	t.Helper()
	CheckFunc(t, path, got, func(want, got string) bool { return want == got })
}

// CheckFunc is Check with equal deciding whether the file's text and got
// agree (a table with a column that a tool does not reproduce exactly).
func CheckFunc(t testing.TB, path, got string, equal func(want, got string) bool) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !equal(string(want), got) {
		diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n"))
		t.Errorf("%s differs from the output (run go test -update to accept it); -want +got:\n%s", path, diff)
	}
}
