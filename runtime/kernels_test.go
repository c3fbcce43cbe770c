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

// TestKernelsPTX checks testdata/kernels.ptx, which the GPU test embeds (a
// GPU binary cannot link NVRTC), is testdata/kernels.cu compiled; run with
// -update to rewrite it. Another NVRTC release writes other PTX: the check
// is skipped under a release other than the one the file names.
func TestKernelsPTX(t *testing.T) {
	src, err := os.ReadFile("testdata/kernels.cu")
	if err != nil {
		t.Fatal(err)
	}
	major, minor, err := nvrtc.Version()
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile("testdata/kernels.ptx")
	if release := fmt.Sprintf("release %d.%d,", major, minor); err == nil && !strings.Contains(string(old), release) {
		t.Skipf("testdata/kernels.ptx is from another NVRTC release than %d.%d", major, minor)
	}
	r, err := nvrtc.Compile(string(src), "kernels.cu", "compute_80")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/kernels.ptx", string(r.PTX))
}
