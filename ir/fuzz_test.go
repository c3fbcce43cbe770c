package ir_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fuser-dev/fuser/diag"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/specs"
)

// FuzzParse feeds arbitrary text to the parser and checker: they must never
// panic, must return either a verified graph or a positioned diag.List, and
// every error must point into the file. The seed corpus (every shipped and
// malformed spec, plus testdata/fuzz) runs in every `go test`.
func FuzzParse(f *testing.F) {
	for _, name := range specs.Names() {
		_, src, _ := specs.Source(name)
		f.Add(src)
	}
	malformed, _ := filepath.Glob("../testdata/malformed/*.fu")
	for _, path := range malformed {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, src string) {
		g, err := ir.Parse("fuzz.fu", src)
		if err == nil {
			if verr := g.Verify(); verr != nil {
				t.Fatalf("built graph does not verify: %v", verr)
			}
			return
		}
		list, ok := err.(diag.List)
		if !ok || len(list) == 0 {
			t.Fatalf("error %T %v is not a non-empty diag.List", err, err)
		}
		for _, e := range list {
			if !e.Pos.IsValid() {
				t.Fatalf("error without a position: %v", e)
			}
		}
		_ = list.Render(src)
	})
}
