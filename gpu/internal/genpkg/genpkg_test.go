package genpkg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreate checks the directories Create refuses, and that it empties
// the one it takes, names its packages' import paths after it and writes
// main.go formatted.
func TestCreate(t *testing.T) {
	path, root, err := Module()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, want string }{
		{filepath.Join(root, "genpkg_x"), "must start with an underscore"},
		{filepath.Join(os.TempDir(), "_genpkg_x"), "not inside the module"},
	} {
		if _, err := Create(c.out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Create(%s) = %v, want an error saying %q", c.out, err, c.want)
		}
	}
	out := filepath.Join(root, "_genpkg_test")
	t.Cleanup(func() { os.RemoveAll(out) })
	if err := os.MkdirAll(filepath.Join(out, "stale"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(out); err != nil || len(ents) != 0 {
		t.Errorf("Create left %s with %d entries (%v), want it empty", out, len(ents), err)
	}
	if want := path + "/_genpkg_test"; d.importPath != want {
		t.Errorf("import path %s, want %s", d.importPath, want)
	}
	if err := d.WriteMain([]byte("package main\nfunc main(  ) {}\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "main.go")); err != nil || string(b) != "package main\n\nfunc main() {}\n" {
		t.Errorf("main.go = %q (%v), want it gofmt-ed", b, err)
	}
	if err := d.WriteMain([]byte("package main\nfunc main( {}\n")); err == nil {
		t.Error("WriteMain of a syntax error: no error")
	}
}
