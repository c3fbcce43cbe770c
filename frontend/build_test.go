package frontend_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/diag"
	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/internal/golden"
	"github.com/fuser-dev/fuser/specs"
)

// TestBuildSpecs types every shipped spec, verifies the graph and compares it
// with its golden dump.
func TestBuildSpecs(t *testing.T) {
	for _, name := range specs.Names() {
		t.Run(name, func(t *testing.T) {
			file, src, _ := specs.Source(name)
			g, err := frontend.Parse(file, src)
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			if err := g.Verify(); err != nil {
				t.Fatalf("verify: %v", err)
			}
			golden.Check(t, filepath.Join("testdata", name+".ir"), g.String())
		})
	}
}

// wantLine finds the "line N" clauses of a malformed spec's "# want:" comment.
var wantLine = regexp.MustCompile(`(?:^# want: |[:;] )(?:two (?:syntax )?errors, both reported: )?(?:syntax error at |error at )?line (\d+)`)

// TestMalformed checks that every malformed spec reports its errors, at the
// lines its "# want:" comment names, and renders them as in the golden file.
func TestMalformed(t *testing.T) {
	files, _ := filepath.Glob("../testdata/malformed/*.fu")
	if len(files) < 25 {
		t.Fatalf("only %d malformed specs", len(files))
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".fu")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			src := string(b)
			_, err = frontend.Parse(name+".fu", src)
			if err == nil {
				t.Fatal("no error reported")
			}
			list, ok := err.(diag.List)
			if !ok {
				t.Fatalf("error is %T, not a diag.List", err)
			}
			var want, got []int
			first, _, _ := strings.Cut(src, "\n")
			for _, m := range wantLine.FindAllStringSubmatch(first, -1) {
				n, _ := strconv.Atoi(m[1])
				want = append(want, n)
			}
			for _, e := range list {
				got = append(got, e.Pos.Line)
			}
			if len(want) == 0 {
				t.Fatalf("no line in %q", first)
			}
			if !slices.Equal(got, want) {
				t.Errorf("errors at lines %v, want %v:\n%s", got, want, list.Render(src))
			}
			golden.Check(t, filepath.Join("testdata", "malformed", name+".err"), list.Render(src))
		})
	}
}
