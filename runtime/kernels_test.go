//go:build nvrtc && !cuda

package runtime

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen/nvrtc"
	"github.com/fuser-dev/fuser/internal/golden"
)

// TestKernelsPTX checks testdata/kernels.ptx and testdata/tma.ptx, which the
// GPU test embeds (a GPU binary cannot link NVRTC), are testdata/kernels.cu
// (for compute_80) and testdata/tma.cu (for compute_90, the tensor copy
// engine's) compiled; run with -update to rewrite them. Another NVRTC
// release writes other PTX: a file is not checked under a release other
// than the one it names.
func TestKernelsPTX(t *testing.T) {
	major, minor, err := nvrtc.Version()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ name, arch string }{{"kernels", "compute_80"}, {"tma", "compute_90"}} {
		src, err := os.ReadFile("testdata/" + f.name + ".cu")
		if err != nil {
			t.Fatal(err)
		}
		old, err := os.ReadFile("testdata/" + f.name + ".ptx")
		if release := fmt.Sprintf("release %d.%d,", major, minor); err == nil && !strings.Contains(string(old), release) {
			t.Logf("testdata/%s.ptx is from another NVRTC release than %d.%d: not checked", f.name, major, minor)
			continue
		}
		r, err := nvrtc.Compile(string(src), f.name+".cu", f.arch)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "testdata/"+f.name+".ptx", string(r.PTX))
	}
}
