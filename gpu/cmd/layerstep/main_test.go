//go:build nvrtc

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen/build"
	"github.com/fuser-dev/fuser/gpu/internal/genpkg"
	"github.com/fuser-dev/fuser/gpu/layerstep"
)

// TestGenerate writes the program for two targets of the tiny spec into a
// directory of the module, checks its main against the packages and their
// plan.json, and vets and builds it with the tag cuda (cgo and cuda.h: the
// nvrtc tag means the flags of scripts/cuda-sdk.sh are set).
func TestGenerate(t *testing.T) {
	_, root, err := genpkg.Module()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(root, "_layerstep_test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := run(dir, "tiny:B=2,S=1,T=17;tiny:B=3,S=1,T=5"); err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile(filepath.Join(dir, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for i, dims := range []string{`{"B": 2, "S": 1, "T": 17}`, `{"B": 3, "S": 1, "T": 5}`} {
		pkg := filepath.Join(dir, []string{"t0", "t1"}[i])
		pj, err := os.ReadFile(filepath.Join(pkg, build.PlanFile))
		if err != nil {
			t.Fatal(err)
		}
		n, err := layerstep.InstanceBytes(pj)
		if err != nil {
			t.Fatal(err)
		}
		want := `{Spec: "tiny", Dims: map[string]int64` + dims + `, Bytes: ` + strconv.FormatInt(n, 10)
		if !strings.Contains(string(main), want) {
			t.Errorf("main.go lacks %s:\n%s", want, main)
		}
		if _, err := os.Stat(filepath.Join(pkg, "kernels.ptx")); err != nil {
			t.Errorf("target %d: %v", i, err)
		}
	}
	pkg := "./" + filepath.Base(dir)
	for _, c := range []string{"vet", "build"} {
		args := []string{c, "-tags", "cuda", pkg}
		if c == "build" {
			args = []string{c, "-tags", "cuda", "-o", os.DevNull, pkg}
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func TestGenerateRefuses(t *testing.T) {
	_, root, err := genpkg.Module()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, bench, want string }{
		{filepath.Join(root, "layerstep_x"), "tiny:B=1,S=1,T=4", "must start with an underscore"},
		{filepath.Join(os.TempDir(), "_layerstep_x"), "tiny:B=1,S=1,T=4", "not inside the module"},
		{filepath.Join(root, "_layerstep_x"), "", "no -bench targets"},
		{filepath.Join(root, "_layerstep_x"), "nosuchspec:B=1", "no embedded spec nosuchspec"},
	} {
		err := run(c.out, c.bench)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%s, %q) = %v, want an error saying %q", c.out, c.bench, err, c.want)
		}
		os.RemoveAll(filepath.Join(root, "_layerstep_x"))
	}
}
