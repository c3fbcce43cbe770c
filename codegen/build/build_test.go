package build

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen/golang"
	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
)

// stubCUDA stands in for codegen/cuda: an empty entry function with the
// kernel's ABI parameters for every entry, which NVRTC compiles.
func stubCUDA(p *plan.Plan, _ map[string]int64) (string, []golang.Kernel, error) {
	ks := golang.DefaultKernels(p)
	var b strings.Builder
	for _, k := range ks {
		var params []string
		for _, prm := range k.Params {
			if prm.Value == nil {
				params = append(params, "long long "+prm.Name)
			} else {
				params = append(params, "void* "+prm.Name)
			}
		}
		for _, e := range k.Entries {
			fmt.Fprintf(&b, "extern \"C\" __global__ void %s(%s) {}\n", e, strings.Join(params, ", "))
		}
	}
	return b.String(), ks, nil
}

// testDims are the dims every spec is built for, where it has them.
var testDims = map[string]int64{"B": 2, "S": 3, "T": 17, "P": 64, "N": 64, "L": 9}

var tinyDims = map[string]int64{"B": 2, "S": 3, "T": 17}

// spec parses the embedded spec name and binds the test dims it declares.
func spec(t testing.TB, name string) (*ir.Graph, map[string]int64) {
	t.Helper()
	filename, src, _ := specs.Source(name)
	g, err := frontend.Parse(filename, src)
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int64{}
	for _, d := range g.Dims {
		dims[d] = testDims[d]
	}
	return g, dims
}

func tiny(t *testing.T) *ir.Graph {
	g, _ := spec(t, "tiny")
	return g
}

func TestBuildFiles(t *testing.T) {
	for _, unfused := range []bool{false, true} {
		dir := t.TempDir()
		var compiled string
		compile := func(src string) ([]byte, string, error) {
			compiled = src
			return []byte("// ptx\n"), "ptxas info    : 0 bytes gmem\n", nil
		}
		if err := build(tiny(t), tinyDims, dir, Options{Unfused: unfused}, compile, stubCUDA); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{SourceFile, "tiny.go", PTXFile, LogFile, PlanFile} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("unfused=%v: %v", unfused, err)
			}
		}
		if cu := read(t, dir, SourceFile); cu != compiled {
			t.Errorf("unfused=%v: %s is not what was compiled", unfused, SourceFile)
		}
		var doc Plan
		if err := json.Unmarshal([]byte(read(t, dir, PlanFile)), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Layer != "tiny" || doc.Fused == unfused || len(doc.Kernels) == 0 || doc.Arena.Size == 0 || len(doc.Outputs) != 1 {
			t.Errorf("unfused=%v: plan.json is off: %+v", unfused, doc)
		}
		if !strings.Contains(read(t, dir, "tiny.go"), "package tiny") {
			t.Errorf("unfused=%v: tiny.go is not package tiny", unfused)
		}
	}
}

func TestBuildNoCompiler(t *testing.T) {
	dir := t.TempDir()
	if err := build(tiny(t), tinyDims, dir, Options{}, nil, stubCUDA); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, PTXFile)); !os.IsNotExist(err) {
		t.Errorf("%s written without a compiler (%v)", PTXFile, err)
	}
}

func TestBuildErrors(t *testing.T) {
	failing := func(*plan.Plan, map[string]int64) (string, []golang.Kernel, error) {
		return "", nil, fmt.Errorf("strategy not supported")
	}
	for _, tc := range []struct {
		name    string
		gen     generator
		dims    map[string]int64
		compile Compiler
		want    string
	}{
		{"unbound dim", stubCUDA, map[string]int64{"B": 2}, nil, "dim S is not bound"},
		{"generator", failing, tinyDims, nil, "strategy not supported"},
		{"compiler", stubCUDA, tinyDims, func(string) ([]byte, string, error) { return nil, "", fmt.Errorf("boom") }, "compile kernels.cu: boom"},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		err := build(tiny(t), tc.dims, dir, Options{}, tc.compile, tc.gen)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: the output directory was made", tc.name)
		}
	}
}

func TestPackageName(t *testing.T) {
	for in, want := range map[string]string{"tiny": "tiny", "Llama3_8B": "llama3_8b", "3x": "layer3x", "type": "layertype", "main": "layermain", "a-b": "ab"} {
		if got := PackageName(in); got != want {
			t.Errorf("PackageName(%q) = %q, want %q", in, got, want)
		}
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func specNames() []string { return specs.Names() }
