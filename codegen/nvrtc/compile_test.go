//go:build nvrtc

package nvrtc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// axpy is self-contained (no includes) and has one kernel with static shared
// memory and one without, so the ptxas report has something to show.
const axpy = `
extern "C" __global__ void axpy(float* x, float a, long long n) {
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = x[i] * a + 1.0f;
}

extern "C" __global__ void block_sum(const float* x, float* out, long long n) {
	__shared__ float part[256];
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	part[threadIdx.x] = i < n ? x[i] : 0.0f;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
		__syncthreads();
	}
	if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}
`

func TestCompileReal(t *testing.T) {
	r, err := Compile(axpy, "axpy.cu", "sm_90a")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("log:\n%s", r.Log)
	if !bytes.Contains(r.PTX, []byte(".entry axpy")) || !bytes.Contains(r.PTX, []byte(".entry block_sum")) {
		t.Errorf("PTX lacks the entries:\n%s", r.PTX)
	}
	if !bytes.HasPrefix(r.CUBIN, []byte("\x7fELF")) {
		t.Errorf("cubin is not an ELF image (%d bytes)", len(r.CUBIN))
	}
	if len(r.Kernels) != 2 {
		t.Fatalf("ptxas report has %d kernels, want 2: %+v", len(r.Kernels), r.Kernels)
	}
	for _, name := range []string{"axpy", "block_sum"} {
		k, ok := r.Kernel(name)
		if !ok {
			t.Fatalf("no ptxas report for %s", name)
		}
		if k.Arch != "sm_90a" || k.Registers <= 0 || k.Spills() {
			t.Errorf("%s: unexpected report %v", name, k)
		}
	}
	if k, _ := r.Kernel("block_sum"); k.SharedBytes != 1024 {
		t.Errorf("block_sum: %d bytes smem, want 1024", k.SharedBytes)
	}
}

func TestCompileVirtual(t *testing.T) {
	r, err := Compile(axpy, "axpy.cu", "compute_90a")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(r.PTX, []byte(".target sm_90a")) {
		t.Errorf("PTX does not target sm_90a:\n%.300s", r.PTX)
	}
	if r.CUBIN != nil || len(r.Kernels) != 0 {
		t.Errorf("virtual arch gave a cubin (%d bytes) or a ptxas report (%v)", len(r.CUBIN), r.Kernels)
	}
}

func TestCompileError(t *testing.T) {
	_, err := Compile("extern \"C\" __global__ void bad(float* x) { x[0] = undefined_name; }", "bad.cu", "sm_90a")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an *Error", err)
	}
	if !strings.Contains(e.Log, "undefined_name") || !strings.Contains(err.Error(), "bad.cu") {
		t.Errorf("error lacks the log or the name: %v", err)
	}
}

func TestVersion(t *testing.T) {
	major, minor, err := Version()
	if err != nil || major < 11 {
		t.Fatalf("version %d.%d, %v", major, minor, err)
	}
	t.Logf("NVRTC %d.%d", major, minor)
}
