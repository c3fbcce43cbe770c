// The decode kernel's loads alone, in its structure, by three copy paths:
// what the tile loop could stream with nothing else in the kernel (no
// query, no tensor-map build, no compute, no partials or merge). Timed as
// harness.cu times the decode kernel (a launch between two events, behind
// a spinning kernel, copies rotated over 1.4 GB; median of 50).
//
// K and V as in bench/specs/decode_attention.fu, [2][units][L][128] bf16
// (a unit is a sequence's kv head). Block (split, unit) takes its split's
// keys in tiles of 16; warp w of NW takes tiles w, w + NW, ... through its
// own ring of NSTG stages, NSTG - 1 tiles in flight while it reads one, as
// fz_att_decode does. Paths:
//   tensor   two 3D tensor copies a tile (K, V: boxes of 64 × 16 × 2, the
//            128-byte swizzle), completing on the stage's mbarrier; the
//            map encoded by the host (cuTensorMapEncodeTiled), a
//            __grid_constant__ parameter
//   rows     32 one-row bulk copies a tile (cp.async.bulk, a lane a row)
//            into rows padded to 272 bytes, on the stage's mbarrier
//   cpasync  16-byte cp.async into padded rows, one group a tile
// Built and run by bench/decode_variants.sh; usage: loader (no arguments).
#include <cuda.h>
#include "timing.cuh"
typedef unsigned u32;
typedef unsigned long long u64;
enum { TENSOR, ROWS, CPASYNC };
constexpr int ROWB = 256, PAD = 272, TR = 16;
__device__ __forceinline__ u32 sa(const void* p) { return (u32)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_wait(u32 b, u32 ph) {
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n @!p bra W;\n}" :: "r"(b), "r"(ph) : "memory");
}
template <int PATH, int NW, int NSTG>
__global__ void __launch_bounds__(NW * 32) kload(const char* base, long L, long chunk, const __grid_constant__ CUtensorMap tm, float* out) {
  extern __shared__ __align__(16) char smraw[];
  char* sm = (char*)(((u64)smraw + 1023) & ~(u64)1023);
  __shared__ __align__(8) u64 bars[NW * NSTG];
  constexpr int RB = PATH == TENSOR ? ROWB : PAD, STB = (2 * TR * RB + 1023) / 1024 * 1024;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long u = blockIdx.y, units = gridDim.y;
  const long j0 = blockIdx.x * chunk, j1 = min(L, j0 + chunk);
  const int ntile = (int)((j1 - j0 + TR - 1) / TR);
  const int mine = ntile > warp ? (ntile - warp + NW - 1) / NW : 0;
  char* const st = sm + warp * NSTG * STB;
  const u32 bar0 = sa(&bars[warp * NSTG]);
  if (PATH != CPASYNC && lane == 0) {
    for (int i = 0; i < NSTG; i++) asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(bar0 + 8 * i));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncwarp();
  // The tile's K and V rows: row r of component c (0 K, 1 V) of unit u.
  const auto row = [&](long c, long j) { return (c * units + u) * L + j; };
  const auto issue = [&](int i, int s) {
    const long jt = j0 + (long)(warp + i * NW) * TR;
    char* const dst = st + s * STB;
    const u32 b = bar0 + 8 * s;
    if (PATH == TENSOR) {
      if (lane == 0) {
        asm volatile("fence.proxy.async.shared::cta;\n\tmbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(b), "r"(2 * TR * ROWB) : "memory");
#pragma unroll
        for (int c = 0; c < 2; c++)
          asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                       :: "r"(sa(dst + c * TR * ROWB)), "l"((u64)&tm), "r"(0), "r"((int)row(c, jt)), "r"(0), "r"(b) : "memory");
      }
    } else if (PATH == ROWS) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      if (lane == 0) asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(b), "r"(2 * TR * ROWB) : "memory");
      __syncwarp();
      const long c = lane >> 4, r = lane & 15;
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   :: "r"(sa(dst + (c * TR + r) * PAD)), "l"(base + row(c, jt + r) * ROWB), "r"(ROWB), "r"(b) : "memory");
    } else {
#pragma unroll
      for (int e0 = 0; e0 < TR * 16; e0 += 32) {
        const int r = (e0 + lane) / 16, ch = (e0 + lane) % 16;
#pragma unroll
        for (int c = 0; c < 2; c++)
          asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" :: "r"(sa(dst + (c * TR + r) * PAD + ch * 16)), "l"(base + row(c, jt + r) * ROWB + ch * 16));
      }
    }
  };
  for (int i = 0; i < NSTG - 1; i++) {
    if (i < mine) issue(i, i);
    if (PATH == CPASYNC) asm volatile("cp.async.commit_group;");
  }
  float acc = 0.f;
  u32 phase = 0;
  for (int i = 0, cur = 0; i < mine; i++, cur = cur + 1 == NSTG ? 0 : cur + 1) {
    if (i + NSTG - 1 < mine) issue(i + NSTG - 1, (cur + NSTG - 1) % NSTG);
    if (PATH == CPASYNC) {
      asm volatile("cp.async.commit_group;\n\tcp.async.wait_group %0;" :: "n"(NSTG - 1));
    } else {
      mbar_wait(bar0 + 8 * cur, (phase >> cur) & 1);
      phase ^= 1u << cur;
    }
    __syncwarp();
    acc += *(const float*)(st + cur * STB + (lane % TR) * RB + (i & 7) * 4);
    __syncwarp();
  }
  if (PATH == CPASYNC) asm volatile("cp.async.wait_group 0;");
  if (acc == 12345.f) out[0] = acc;
}
template <int PATH, int NW, int NSTG>
static void run(const char* name, char* buf, long units, long L, long splits, float* out) {
  const char* paths[] = {"tensor", "rows", "cpasync"};
  auto k = kload<PATH, NW, NSTG>;
  constexpr int RB = PATH == TENSOR ? ROWB : PAD, STB = (2 * TR * RB + 1023) / 1024 * 1024;
  const int smem = NW * NSTG * STB + 1024;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const size_t bytes = (size_t)units * 2 * L * ROWB;
  const int rot = (int)std::max<size_t>(1, VT_POOL / bytes);
  std::vector<CUtensorMap> maps(rot);
  for (int r = 0; r < rot; r++) {
    cuuint64_t dims[3] = {64, (cuuint64_t)units * 2 * L, 2}, strides[2] = {ROWB, 128};
    cuuint32_t box[3] = {64, TR, 2}, es[3] = {1, 1, 1};
    if (cuTensorMapEncodeTiled(&maps[r], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, buf + (size_t)r * bytes, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
      printf("cuTensorMapEncodeTiled failed\n");
      exit(1);
    }
  }
  const long chunk = ((L + splits - 1) / splits + TR - 1) / TR * TR;
  const dim3 grid((unsigned)((L + chunk - 1) / chunk), (unsigned)units);
  auto launch = [&](int r) { k<<<grid, NW * 32, smem>>>(buf + (size_t)(r % rot) * bytes, L, chunk, maps[r % rot], out); };
  const int N = 50;
  const std::vector<float> ts = vt_times(launch, N);
  printf("%-11s %-8s %d warps x %d stages, grid %ux%u: per-launch median %.2f us %.2f TB/s\n", name, paths[PATH], NW, NSTG, grid.x, grid.y, ts[N / 2],
         bytes / ts[N / 2] / 1e6);
}
int main() {
  char* const buf = vt_ones();
  float* out;
  CK(cudaMalloc(&out, 4));
  struct Shape { const char* name; long units, L, splits; };
  const Shape shapes[] = {{"B1 L32768", 8, 32768, 16}, {"B1 L131072", 8, 131072, 16}, {"B64 L4096", 512, 4096, 1}};
  for (const Shape& s : shapes) {
    run<TENSOR, 4, 6>(s.name, buf, s.units, s.L, s.splits, out);
    run<TENSOR, 8, 3>(s.name, buf, s.units, s.L, s.splits, out);
    run<ROWS, 4, 6>(s.name, buf, s.units, s.L, s.splits, out);
    run<ROWS, 8, 3>(s.name, buf, s.units, s.L, s.splits, out);
    run<CPASYNC, 4, 6>(s.name, buf, s.units, s.L, s.splits, out);
  }
  return 0;
}
