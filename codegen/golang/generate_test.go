package golang

import (
	"go/format"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/internal/golden"
)

func TestGenerateTiny(t *testing.T) {
	p, dims := planSpec(t, "tiny", false)
	src, err := Generate(p, dims, nil, "tiny", "kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/tiny.go.golden", src)
}

// TestGenerateAll generates every spec, fused and unfused, and checks the
// result is gofmt-clean (the cuda-tagged test builds it).
func TestGenerateAll(t *testing.T) {
	for _, name := range specNames() {
		for _, unfused := range []bool{false, true} {
			p, dims := planSpec(t, name, unfused)
			src, err := Generate(p, dims, nil, name, "kernels.ptx")
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			formatted, err := format.Source([]byte(src))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if string(formatted) != src {
				t.Errorf("%s: generated code is not gofmt-clean", name)
			}
		}
	}
}

// TestGenerateKernels generates from a CUDA module's description: its
// entries, parameters (here with one more leaf input, as a page table can
// be) and block are what Forward launches.
func TestGenerateKernels(t *testing.T) {
	p, dims := planSpec(t, "tiny", false)
	ks := DefaultKernels(p)
	ks[2].Entries = []string{"attn_split", "attn_reduce"}
	ks[2].Block = 64
	ks[2].Params = append([]codegen.Param{{Name: "pos", Value: p.Graph.Inputs[1]}}, ks[2].Params...)
	src, err := Generate(p, dims, ks, "tiny", "kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"attn_split",` + "\n\t\"attn_reduce\",",
		"runtime.Launch(l.kernels[2], [3]int64{1, 2, 2}, 64, 49920, s, l.bufPos.Ptr, l.bufArena.At(256), l.bufKv.Ptr, l.bufArena.At(0), d.B, d.S, d.T)",
		"runtime.Launch(l.kernels[3], [3]int64{1, 2, 2}, 64, 49920, s, l.bufPos.Ptr, l.bufArena.At(256), l.bufKv.Ptr, l.bufArena.At(0), d.B, d.S, d.T)",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("generated code lacks %q", want)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	p, dims := planSpec(t, "tiny", false)
	missingDim := DefaultKernels(p)
	missingDim[0].Params = append(missingDim[0].Params, codegen.Param{Name: "dim_Q", Dim: "Q"})
	noBlock := DefaultKernels(p)
	noBlock[1].Block = 0
	for _, tc := range []struct {
		name      string
		dims      map[string]int64
		kernels   []Kernel
		pkg, ptx  string
		wantError string
	}{
		{"package", dims, nil, "main", "kernels.ptx", "cannot name a package"},
		{"ptx", dims, nil, "tiny", "a/b.ptx", "cannot name the embedded PTX"},
		{"unbound", map[string]int64{"B": 1, "S": 1}, nil, "tiny", "k.ptx", "dim T is not bound"},
		{"count", dims, DefaultKernels(p)[:2], "tiny", "k.ptx", "2 kernel descriptions for 7 plan kernels"},
		{"dim", dims, missingDim, "tiny", "k.ptx", "no dim Q"},
		{"block", dims, noBlock, "tiny", "k.ptx", "no block size"},
	} {
		_, err := Generate(p, tc.dims, tc.kernels, tc.pkg, tc.ptx)
		if err == nil || !strings.Contains(err.Error(), tc.wantError) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.wantError)
		}
	}
}
