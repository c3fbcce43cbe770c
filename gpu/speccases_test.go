package gpu

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/internal/specgen"
)

// TestSpecCasesOnCPU does for the generated specs the bundle ships (make
// gpu-bundle GEN_SPECS=32, seeds from 0) what TestCasesOnCPU does for the
// suite's cases, but logs a kernel codegen/cuda fails to generate (the
// device suite skips it; TestCodegenFindings keeps the known kinds): they
// plan, generate without panicking and reproducibly, lay out, and the
// references give every kernel parameter its bytes.
func TestSpecCasesOnCPU(t *testing.T) {
	const n = 32
	dir := t.TempDir()
	if err := specgen.Write(dir, 0, n); err != nil {
		t.Fatal(err)
	}
	cases, err := SpecCases(dir, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != n {
		t.Fatalf("%d cases from %d files", len(cases), n)
	}
	for _, c := range cases {
		caseOnCPU(t, c, false)
	}
}

// TestRegressionSpecsOnCPU does what TestCasesOnCPU does, strictly, for the
// specs of internal/specgen/testdata: each reproduces a bug the generator
// found, codegen findings among them, and every kernel of their plans must
// generate.
func TestRegressionSpecsOnCPU(t *testing.T) {
	cases, err := SpecCases(filepath.Join("..", "internal", "specgen", "testdata"), DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no spec in internal/specgen/testdata")
	}
	for _, c := range cases {
		caseOnCPU(t, c, true)
	}
}

// TestCodegenFindings runs the generated specs of
// internal/specgen/testdata/codegen, each a kernel codegen/cuda fails to
// generate with an error other than "not supported yet", or panics on (the
// file's first line says which). Each is a skipped subtest while the
// finding stands; one that generates fails, to be moved to the specs
// TestSpecCasesOnCPU-style checks cover. Without the directory (no open
// finding) the test is skipped.
func TestCodegenFindings(t *testing.T) {
	dir := filepath.Join("..", "internal", "specgen", "testdata", "codegen")
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("no open codegen finding (%s does not exist)", dir)
	}
	cases, err := SpecCases(dir, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("no spec in %s", dir)
	}
	for _, c := range cases {
		t.Run(c.Spec, func(t *testing.T) {
			if err := generateAll(c); err != nil {
				t.Skipf("known finding: %v", err)
			}
			t.Errorf("%s now generates: move it out of %s", c.File, dir)
		})
	}
}

// generateAll plans c both ways and returns the first error codegen/cuda
// gives other than "not supported yet", or its panic.
func generateAll(c Case) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	g, err := c.Graph()
	if err != nil {
		return err
	}
	for _, fused := range []bool{true, false} {
		p, err := NewPlan(g, c.Dims, fused)
		if err != nil {
			return err
		}
		for _, k := range p.Kernels {
			if k.Err != nil && !strings.Contains(k.Err.Error(), "not supported yet") {
				return fmt.Errorf("%s: %w", k.Plan.Name, k.Err)
			}
		}
		if _, err := NewLayout(p); err != nil {
			return err
		}
	}
	return nil
}
