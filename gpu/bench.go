package gpu

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// BenchTarget is one layer and dims `fuser bench` measures.
type BenchTarget struct {
	Spec string
	Dims map[string]int64
}

// ParseBenchTargets reads SPEC:B=1,S=1,T=4096;SPEC:B=16,... (the list the
// bundle compiles for the benchmarks; see the Makefile's BENCH).
func ParseBenchTargets(s string) ([]BenchTarget, error) {
	var out []BenchTarget
	for _, item := range strings.Split(s, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		spec, dimsStr, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("bench target %q is not SPEC:B=1,S=1,T=4096", item)
		}
		dims, err := ParseDims(dimsStr)
		if err != nil {
			return nil, err
		}
		out = append(out, BenchTarget{Spec: spec, Dims: dims})
	}
	return out, nil
}

// ParseDims reads B=1,S=1,T=4096 (see ir.ParseDims).
func ParseDims(s string) (map[string]int64, error) {
	dims, err := ir.ParseDims(s)
	if err != nil {
		return nil, fmt.Errorf("dims: %w", err)
	}
	return dims, nil
}

// CeilingGemmDims are the dims of the GEMM whose rate, with our own
// generated tensor-core kernel, is one of the FLOP ceilings.
var CeilingGemmDims = map[string]int64{"M": 8192}

// CeilingGemm is an 8192×8192×8192 bf16 matmul as a layer: the plan is one
// gemm kernel of codegen/cuda.
func CeilingGemm() (*ir.Graph, error) {
	return frontend.Parse("gemm_ceiling.fu", `
layer gemm_ceiling
dim M
const K = 8192, N = 8192
input  a : bf16[M, K]
param  w : bf16[K, N]
output y : bf16[M, N]
y = a @ w
`)
}

// MMAPeakSource is a register-only tensor-core loop: every warp issues
// mma.sync m16n8k16 bf16→f32 on four independent accumulators with no
// memory traffic. Its rate is the mma.sync issue ceiling, measured without
// cuBLAS (our GEMM kernels use mma.sync). MMAPeakFlops gives its FLOPs.
const MMAPeakSource = `typedef unsigned int u32;
extern "C" __global__ void __launch_bounds__(256) fz_mma_peak(float* out, int iters) {
  u32 a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = 0x3c003c00u + (threadIdx.x & 7) + i;
  for (int i = 0; i < 2; ++i) b[i] = 0x3c003c00u + (threadIdx.x & 3) + i;
  float d[4][4];
  for (int j = 0; j < 4; ++j) for (int i = 0; i < 4; ++i) d[j][i] = 0.f;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                   : "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  float s = 0.f;
  for (int j = 0; j < 4; ++j) for (int i = 0; i < 4; ++i) s += d[j][i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
`

// HoldSource is a kernel that keeps the stream busy: one thread spins on
// the global timer for ns nanoseconds. Launched ahead of timed launches it
// lets the host queue them all before the first starts, so that the
// events time the GPU's work and not the host's launch rate.
const HoldSource = `extern "C" __global__ void fz_hold(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
`

// MMAPeakFlops is the work of fz_mma_peak: 2·16·8·16 FLOPs per mma, four
// per iteration and warp.
func MMAPeakFlops(blocks, threads, iters int64) int64 {
	return blocks * (threads / 32) * iters * 4 * 2 * 16 * 8 * 16
}

// BenchPlans plans a layer, fused and unfused, at dims for target t
// (decode attention split at splitKeys keys when positive; see
// NewPlanSplit).
func BenchPlans(g *ir.Graph, dims map[string]int64, splitKeys int64, t plan.Target) (fused, unfused *Plan, err error) {
	if fused, err = NewPlanSplit(g, dims, true, splitKeys, t); err != nil {
		return nil, nil, err
	}
	if unfused, err = NewPlanSplit(g, dims, false, 0, t); err != nil {
		return nil, nil, err
	}
	return fused, unfused, nil
}

// CeilingPlan plans CeilingGemm.
func CeilingPlan() (*Plan, error) {
	g, err := CeilingGemm()
	if err != nil {
		return nil, err
	}
	return NewPlan(g, CeilingGemmDims, true)
}
