//go:build nvrtc

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen/build"
	"github.com/fuser-dev/fuser/gpu/internal/genpkg"
)

// TestGenerate writes the program into a directory of the module, checks
// its main against the targets' packages, and vets and builds it with the
// tag cuda (cgo and cuda.h: the nvrtc tag means the flags of
// scripts/cuda-sdk.sh are set), which also checks that every generated
// Layer is a laddercheck.Layer and every name main calls exists.
func TestGenerate(t *testing.T) {
	_, root, err := genpkg.Module()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "_laddercheck_test")
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile(filepath.Join(dir, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`Spec: "llama3_8b", Dims: map[string]int64{"B": 1, "S": 1, "T": 4096}`,
		`return l.(*t0.Layer).Step(batch, t0.StepInputs{
					X:   laddercheck.Elems[uint16](in[0]),
					Pos: laddercheck.Elems[int32](in[1]),
				})`,
		"return []runtime.Buffer{p.X(), p.Pos(), p.Kv(), p.Y()}",
		`Spec: "paged_decode", Dims: map[string]int64{"B": 8, "N": 48, "P": 40, "S": 1, "T": 64}`,
		"KvPages:  laddercheck.Elems[int32](in[3]),",
		"return []runtime.Buffer{p.X(), p.Pos(), p.KvIndptr(), p.KvPages(), p.KvLast(), p.Kv(), p.Y()}",
		"d := t1.Planned\n\t\t\t\td.B = int64(batch)",
	} {
		if !strings.Contains(string(main), want) {
			t.Errorf("main.go lacks\n%s\nin\n%s", want, main)
		}
	}
	for _, pkg := range []string{"t0", "t1"} {
		if _, err := os.Stat(filepath.Join(dir, pkg, build.PTXFile)); err != nil {
			t.Errorf("package %s: %v", pkg, err)
		}
	}
	pkg := "./" + filepath.Base(dir)
	for _, args := range [][]string{{"vet", "-tags", "cuda", pkg}, {"build", "-tags", "cuda", "-o", os.DevNull, pkg}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func TestGenerateRefuses(t *testing.T) {
	err := run(filepath.Join(os.TempDir(), "_laddercheck_x"))
	if err == nil || !strings.Contains(err.Error(), "not inside the module") {
		t.Errorf("run outside the module: %v, want an error saying so", err)
	}
}
