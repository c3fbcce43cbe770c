// Package genpkg writes the Go packages `fuser build` generates into a
// directory of this module, beside a generated main that drives them on the
// device: gpu/cmd/layerstep's timing program and gpu/cmd/laddercheck's
// ladder check. The directory's name starts with an underscore, so that
// ./... patterns skip it; `make gpu-bundle` builds it with the tag cuda.
package genpkg

import (
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fuser-dev/fuser/codegen/build"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// Dir is a directory of generated packages inside the module.
type Dir struct {
	abs, importPath string
}

// Create checks that out lies inside the module and that its name starts
// with an underscore, and makes it, empty.
func Create(out string) (*Dir, error) {
	if !strings.HasPrefix(filepath.Base(out), "_") {
		return nil, fmt.Errorf("-out %s: the directory's name must start with an underscore, so that ./... skips it", out)
	}
	modPath, modRoot, err := Module()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(modRoot, abs)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("-out %s is not inside the module at %s", out, modRoot)
	}
	if err := os.RemoveAll(abs); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	return &Dir{abs: abs, importPath: modPath + "/" + filepath.ToSlash(rel)}, nil
}

// Package is a generated package of a Dir.
type Package struct {
	// Dir is its directory, Import its import path.
	Dir, Import string
}

// Build builds g at dims into the subdirectory name as fuser build builds
// it for the H200: the fused plan, its kernels compiled to PTX by NVRTC
// (which needs the build tag nvrtc).
func (d *Dir) Build(name string, g *ir.Graph, dims map[string]int64) (Package, error) {
	dir := filepath.Join(d.abs, name)
	if err := build.Build(g, dims, dir, build.Options{Target: plan.H200}, build.NVRTC(plan.H200.Arch)); err != nil {
		return Package{}, err
	}
	return Package{Dir: dir, Import: d.importPath + "/" + name}, nil
}

// WriteMain formats src and writes it as the directory's main.go.
func (d *Dir) WriteMain(src []byte) error {
	out, err := format.Source(src)
	if err != nil {
		return fmt.Errorf("main.go: %w", err)
	}
	return os.WriteFile(filepath.Join(d.abs, "main.go"), out, 0o644)
}

// Module is the module's path and root directory.
func Module() (path, root string, err error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Path}} {{.Dir}}").Output()
	if err != nil {
		return "", "", fmt.Errorf("go list -m: %w", err)
	}
	path, root, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok {
		return "", "", fmt.Errorf("go list -m: %q", out)
	}
	return path, root, nil
}
