//go:build nvrtc

package golang

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen/cuda"
)

// TestGeneratedPackagesBuild writes the package of every spec, fused and
// unfused, and of the varlen layers (testPlans) into a directory of the module (so the runtime import resolves;
// the leading underscore keeps ./... patterns out of it, so the packages
// are named one by one) and vets and builds
// them with the tag cuda. It needs cgo and cuda.h: the nvrtc tag means the
// flags from scripts/cuda-sdk.sh are set. The kernels are described as
// codegen/cuda generates them, so that the launches with tensor maps
// (codegen.RowMap: the fused decode attention at head dims of whole
// 128-byte lines) are built too.
func TestGeneratedPackagesBuild(t *testing.T) {
	root := moduleRoot(t)
	dir, err := os.MkdirTemp(root, "_gen")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var pkgs []string
	maps := 0
	for _, np := range testPlans(t) {
		pkg := np.name
		m, err := cuda.Generate(np.p)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		var ks []Kernel
		for _, k := range m.Kernels {
			ks = append(ks, Kernel{Entries: k.Entries, Params: k.Params, Block: k.Block})
		}
		src, err := Generate(np.p, np.dims, ks, pkg, "kernels.ptx")
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		maps += strings.Count(src, "runtime.RowMap(")
		pkgDir := filepath.Join(dir, pkg)
		pkgs = append(pkgs, "./"+filepath.Join(filepath.Base(dir), pkg))
		if err := os.Mkdir(pkgDir, 0o755); err != nil {
			t.Fatal(err)
		}
		// The PTX is only embedded here, never loaded.
		write(t, filepath.Join(pkgDir, "kernels.ptx"), "// placeholder\n")
		write(t, filepath.Join(pkgDir, pkg+".go"), src)
	}
	if maps == 0 {
		t.Fatal("no package encodes a tensor map")
	}
	t.Logf("%d tensor map launches", maps)
	for _, cmd := range []string{"vet", "build"} {
		args := append([]string{cmd, "-tags", "cuda"}, pkgs...)
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
