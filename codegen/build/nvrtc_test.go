//go:build nvrtc

package build

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen/cuda"
	"github.com/fuser-dev/fuser/passes"
)

// TestBuildNVRTC builds tiny, fused and unfused, with NVRTC for sm_90a and
// checks every entry is in the PTX and has a ptxas report in plan.json.
// A plan codegen/cuda cannot generate yet is built with the stub kernels.
// (Compiling every spec's kernels is codegen/cuda's test.)
func TestBuildNVRTC(t *testing.T) {
	for _, unfused := range []bool{false, true} {
		t.Run(map[bool]string{false: "fused", true: "unfused"}[unfused], func(t *testing.T) {
			t.Parallel()
			g, dims := spec(t, "tiny")
			pipeline := passes.Fused
			if unfused {
				pipeline = passes.Unfused
			}
			st, err := passes.Run(g, pipeline, passes.Options{Dims: dims})
			if err != nil {
				t.Fatal(err)
			}
			gen := generator(cudaKernels)
			if _, err := cuda.Generate(st.Plan); err != nil {
				t.Logf("stub kernels: %v", err)
				gen = stubCUDA
			}
			dir := t.TempDir()
			if err := build(g, dims, dir, Options{Unfused: unfused}, NVRTC("sm_90a"), gen); err != nil {
				t.Fatal(err)
			}
			checkCompiled(t, dir)
		})
	}
}

func checkCompiled(t *testing.T, dir string) {
	t.Helper()
	ptx, err := os.ReadFile(filepath.Join(dir, PTXFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc Plan
	if err := json.Unmarshal([]byte(read(t, dir, PlanFile)), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range doc.Kernels {
		for _, e := range k.Entries {
			if !strings.Contains(string(ptx), ".entry "+e+"(") {
				t.Errorf("%s: no entry %s in the PTX", doc.Layer, e)
			}
		}
		if len(k.Ptxas) != len(k.Entries) {
			t.Errorf("%s: kernel %s: %d ptxas reports for %d entries", doc.Layer, k.Name, len(k.Ptxas), len(k.Entries))
		}
		for _, r := range k.Ptxas {
			t.Log(r)
		}
	}
}
