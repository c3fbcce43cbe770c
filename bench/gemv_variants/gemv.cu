// gemv.cu: the GEMV shapes of a decode step (x[M, K] · W[K, N], W row-major
// bf16, N contiguous) by a row-streaming kernel whose variants differ in the
// rows each warp keeps in flight (U), the columns a block owns (TN) and the
// K splits, with the split-K reduction in the same launch (the last block of
// a column tile to arrive sums the splits' partials in split order). Timed
// the way fuser bench times a kernel (timing.cuh), every launch on another
// copy of W; bytes are W's only. Build: nvcc -O3 -arch=sm_90a -std=c++17.
#include "../decode_variants/timing.cuh"
#include <cuda_bf16.h>
#include <cmath>

constexpr int NT = 256;  // threads a block: 8 warps

__device__ __forceinline__ void bf8(const uint4 v, float* f) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; i++) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}

__device__ __forceinline__ uint4 ldg_stream(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// split_reduce counts a block's arrival at its column tile once its
// partials are written; the last of the tile's splits sums them in split
// order into y and resets the counter.
template <int TN>
__device__ void split_reduce(const float* ws, int* cnt, float* y, int M, int N, int splits, int tile) {
  __shared__ int last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(&cnt[tile], 1) == splits - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int e = threadIdx.x; e < M * TN; e += NT) {
    const int m = e / TN, n = tile * TN + e % TN;
    if (n >= N) continue;
    float v = 0.f;
    for (int q = 0; q < splits; q++) v += __ldcg(&ws[((size_t)q * M + m) * N + n]);
    y[(size_t)m * N + n] = v;
  }
  if (threadIdx.x == 0) cnt[tile] = 0;
}

// LPR lanes read one row's TN = LPR * 8 columns; a warp reads 32 / LPR rows
// at once; U such loads are in flight a thread, double-buffered.
template <int MR, int U, int LPR>
__global__ void __launch_bounds__(NT) gemv(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ W,
                                           float* __restrict__ ws, int* __restrict__ cnt, float* __restrict__ y,
                                           int M, int K, int N, int splits, int kper) {
  constexpr int TN = LPR * 8, RPW = 32 / LPR, RB = RPW * (NT / 32);  // rows a block pass
  extern __shared__ __align__(16) float sm[];
  float* As = sm;                    // [MR][kper]
  float* red = sm + MR * kper;       // [NT/32*RPW][TN] partial rows, per m
  const int ntile = (N + TN - 1) / TN;
  const int tile = blockIdx.x % ntile, sp = blockIdx.x / ntile;
  const int k0 = sp * kper, k1 = min(K, k0 + kper);
  const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
  const int sub = lane / LPR, cl = lane % LPR;
  const int col = tile * TN + cl * 8;
  for (int e = tid; e < MR * kper; e += NT) {
    const int m = e / kper, k = k0 + e % kper;
    As[e] = (m < M && k < k1) ? __bfloat162float(x[(size_t)m * K + k]) : 0.f;
  }
  __syncthreads();
  float acc[MR][8];
#pragma unroll
  for (int m = 0; m < MR; m++)
#pragma unroll
    for (int c = 0; c < 8; c++) acc[m][c] = 0.f;
  const int r0 = wid * RPW + sub;  // this thread's first row offset in a pass
  const bool colok = col < N;
  const __nv_bfloat16* wp = W + (size_t)col;
  uint4 cur[U];
  auto load = [&](int kb, uint4* buf) {
#pragma unroll
    for (int u = 0; u < U; u++) {
      const int k = kb + u * RB + r0;
      buf[u] = (colok && k < k1) ? ldg_stream(wp + (size_t)k * N) : make_uint4(0, 0, 0, 0);
    }
  };
  load(k0, cur);
  for (int kb = k0; kb < k1; kb += U * RB) {
    uint4 nxt[U];
    load(kb + U * RB, nxt);
#pragma unroll
    for (int u = 0; u < U; u++) {
      float b[8];
      bf8(cur[u], b);
      const int kl = kb + u * RB + r0 - k0;
#pragma unroll
      for (int m = 0; m < MR; m++) {
        const float a = As[m * kper + min(kl, kper - 1)];
#pragma unroll
        for (int c = 0; c < 8; c++) acc[m][c] = fmaf(a, b[c], acc[m][c]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; u++) cur[u] = nxt[u];
  }
  // Sum the block's row streams, one m at a time, in stream order.
  constexpr int NS = NT / 32 * RPW;
  for (int m = 0; m < MR; m++) {
    __syncthreads();
#pragma unroll
    for (int c = 0; c < 8; c++) red[(wid * RPW + sub) * TN + cl * 8 + c] = acc[m][c];
    __syncthreads();
    for (int s = tid; s < TN; s += NT) {
      float v = 0.f;
      for (int q = 0; q < NS; q++) v += red[q * TN + s];
      const int n = tile * TN + s;
      if (m < M && n < N) {
        if (splits == 1) y[(size_t)m * N + n] = v;
        else ws[((size_t)sp * M + m) * N + n] = v;
      }
    }
  }
  if (splits > 1) split_reduce<TN>(ws, cnt, y, M, N, splits, tile);
}

struct Shape { int K, N; };

// The tensor-core variant: a warp owns 64 columns; lane (g, t) = (lane / 4,
// lane % 4) streams columns c_g .. c_g + 7 (c_g = 8 g) of rows 2t, 2t + 1,
// 2t + 8, 2t + 9 of each 16-row step straight into registers (four 16-byte
// loads, 128 contiguous bytes per 8 lanes); byte permutes pair the rows into
// the A fragments of four m16n8k16 MMAs (A = W^T: MMA j's row g is column
// c_g + 2j, row g + 8 column c_g + 2j + 1), B is x^T from shared memory
// (its n is the batch row), D accumulates in f32. WK warps split the block's
// K range; U steps are in flight a lane, double-buffered.
__device__ __forceinline__ void mma16816(float* d, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int NB, int U, int WK>
__global__ void __launch_bounds__(NT) gemv_tc(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ W,
                                              float* __restrict__ ws, int* __restrict__ cnt, float* __restrict__ y,
                                              int M, int K, int N, int splits, int kper) {
  constexpr int WN = NT / 32 / WK, TN = 64 * WN, MR = NB * 8;
  extern __shared__ __align__(16) float sm[];
  const int xs = kper / 2 + 4;  // words a staged x row (padded: no bank conflicts)
  unsigned* X = (unsigned*)sm;  // [MR][xs] bf16 pairs
  float* red = sm + MR * xs;    // [WK][MR][TN]
  const int ntile = (N + TN - 1) / TN;
  const int tile = blockIdx.x % ntile, sp = blockIdx.x / ntile;
  const int k0 = sp * kper, k1 = min(K, k0 + kper);
  const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
  const int wn = wid % WN, wk = wid / WN, g = lane >> 2, t = lane & 3;
  for (int e = tid; e < MR * (kper / 2); e += NT) {
    const int m = e / (kper / 2), k = k0 + 2 * (e % (kper / 2));
    unsigned v = 0;
    if (m < M && k < k1) v = *(const unsigned*)(x + (size_t)m * K + k);  // K even, k1 even
    X[m * xs + e % (kper / 2)] = v;
  }
  __syncthreads();
  float acc[NB][4][4];
#pragma unroll
  for (int nb = 0; nb < NB; nb++)
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
      for (int i = 0; i < 4; i++) acc[nb][j][i] = 0.f;
  const int col = tile * TN + wn * 64 + g * 8;
  const bool colok = col < N;
  const __nv_bfloat16* wp = W + (size_t)col;
  // Steps of 16 rows: this warp takes steps wk, wk + WK, ...
  const int nstep = (k1 - k0 + 15) / 16;
  uint4 cur[U][4];
  auto load = [&](int s0, uint4 (*buf)[4]) {
#pragma unroll
    for (int u = 0; u < U; u++) {
      const int kb = k0 + (s0 + u * WK) * 16;
      const int rows[4] = {kb + 2 * t, kb + 2 * t + 1, kb + 2 * t + 8, kb + 2 * t + 9};
#pragma unroll
      for (int r = 0; r < 4; r++)
        buf[u][r] = (colok && rows[r] < k1) ? ldg_stream(wp + (size_t)rows[r] * N) : make_uint4(0, 0, 0, 0);
    }
  };
  load(wk, cur);
  for (int s = wk; s < nstep; s += U * WK) {
    uint4 nxt[U][4];
    load(s + U * WK, nxt);
#pragma unroll
    for (int u = 0; u < U; u++) {
      const int kl = (s + u * WK) * 16;  // offset in the block's K range
      const unsigned* r0 = (const unsigned*)&cur[u][0];
      const unsigned* r1 = (const unsigned*)&cur[u][1];
      const unsigned* r2 = (const unsigned*)&cur[u][2];
      const unsigned* r3 = (const unsigned*)&cur[u][3];
      unsigned b[NB][2];
#pragma unroll
      for (int nb = 0; nb < NB; nb++) {
        const int xi = min(kl, kper - 16) / 2 + t;
        b[nb][0] = X[(nb * 8 + g) * xs + xi];
        b[nb][1] = X[(nb * 8 + g) * xs + xi + 4];
      }
#pragma unroll
      for (int j = 0; j < 4; j++) {
        unsigned a[4];
        a[0] = __byte_perm(r0[j], r1[j], 0x5410);
        a[1] = __byte_perm(r0[j], r1[j], 0x7632);
        a[2] = __byte_perm(r2[j], r3[j], 0x5410);
        a[3] = __byte_perm(r2[j], r3[j], 0x7632);
#pragma unroll
        for (int nb = 0; nb < NB; nb++) mma16816(acc[nb][j], a, b[nb][0], b[nb][1]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int r = 0; r < 4; r++) cur[u][r] = nxt[u][r];
  }
  // D: row g of MMA j is column c_g + 2j, row g + 8 column c_g + 2j + 1; its
  // columns 2t, 2t + 1 are batch rows nb * 8 + 2t, + 1.
  __syncthreads();
#pragma unroll
  for (int nb = 0; nb < NB; nb++)
#pragma unroll
    for (int j = 0; j < 4; j++) {
      const int c = wn * 64 + g * 8 + 2 * j, m = nb * 8 + 2 * t;
      red[(wk * MR + m) * TN + c] = acc[nb][j][0];
      red[(wk * MR + m + 1) * TN + c] = acc[nb][j][1];
      red[(wk * MR + m) * TN + c + 1] = acc[nb][j][2];
      red[(wk * MR + m + 1) * TN + c + 1] = acc[nb][j][3];
    }
  __syncthreads();
  for (int e = tid; e < M * TN; e += NT) {
    const int m = e / TN, c = e % TN, n = tile * TN + c;
    float v = 0.f;
#pragma unroll
    for (int q = 0; q < WK; q++) v += red[(q * MR + m) * TN + c];
    if (n < N) {
      if (splits == 1) y[(size_t)m * N + n] = v;
      else ws[((size_t)sp * M + m) * N + n] = v;
    }
  }
  if (splits > 1) split_reduce<TN>(ws, cnt, y, M, N, splits, tile);
}

template <int NB, int U, int WK>
void run_tc(const char* name, char* pool, int M, Shape s, float* ws, int* cnt, float* y, __nv_bfloat16* x, double copy) {
  constexpr int TN = 64 * (NT / 32 / WK), MR = NB * 8;
  const size_t wbytes = (size_t)s.K * s.N * 2;
  const int copies = (int)(VT_POOL / wbytes);
  const int ntile = (s.N + TN - 1) / TN;
  for (int target : {132, 264, 396, 528}) {
    int splits = std::max(1, (target + ntile - 1) / ntile);
    int kper = ((s.K + splits - 1) / splits + 15) / 16 * 16;
    splits = (s.K + kper - 1) / kper;
    const size_t smem = (size_t)MR * (kper / 2 + 4) * 4 + (size_t)WK * MR * TN * 4;
    if (smem > 200 * 1024) continue;
    CK(cudaFuncSetAttribute(gemv_tc<NB, U, WK>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    auto launch = [&](int r) {
      const __nv_bfloat16* W = (const __nv_bfloat16*)(pool + (size_t)(r % copies) * wbytes);
      gemv_tc<NB, U, WK><<<ntile * splits, NT, smem>>>(x, W, ws, cnt, y, M, s.K, s.N, splits, kper);
    };
    auto ts = vt_times(launch, 50);
    const double us = ts[ts.size() / 2];
    printf("%-6s M%-3d K%-6d N%-6d U%d TN%-4d WK%d splits %-3d blocks %-5d %8.2f us %6.3f TB/s %5.3f of copy\n", name, M, s.K,
           s.N, U, TN, WK, splits, ntile * splits, us, wbytes / us / 1e6, wbytes / us / 1e6 / copy);
  }
}

// run times the CUDA-core variant at four grid sizes (132 to 528 blocks).
template <int MR, int U, int LPR>
void run(const char* name, char* pool, int M, Shape s, float* ws, int* cnt, float* y, __nv_bfloat16* x, double copy) {
  constexpr int TN = LPR * 8;
  const size_t wbytes = (size_t)s.K * s.N * 2;
  const int copies = (int)(VT_POOL / wbytes);
  const int ntile = (s.N + TN - 1) / TN;
  for (int target : {132, 264, 396, 528}) {
    int splits = std::max(1, (target + ntile - 1) / ntile);
    int kper = ((s.K + splits - 1) / splits + 7) / 8 * 8;
    splits = (s.K + kper - 1) / kper;
    const size_t smem = (size_t)MR * kper * 4 + (size_t)(NT / 32) * (32 / LPR) * TN * 4;
    if (smem > 200 * 1024) continue;
    CK(cudaFuncSetAttribute(gemv<MR, U, LPR>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    auto launch = [&](int r) {
      const __nv_bfloat16* W = (const __nv_bfloat16*)(pool + (size_t)(r % copies) * wbytes);
      gemv<MR, U, LPR><<<ntile * splits, NT, smem>>>(x, W, ws, cnt, y, M, s.K, s.N, splits, kper);
    };
    auto ts = vt_times(launch, 50);
    const double us = ts[ts.size() / 2];
    printf("%-6s M%-3d K%-6d N%-6d U%d TN%-4d splits %-3d blocks %-5d %8.2f us %6.3f TB/s %5.3f of copy\n", name, M, s.K,
           s.N, U, TN, splits, ntile * splits, us, wbytes / us / 1e6, wbytes / us / 1e6 / copy);
  }
}

__global__ void copyk(const uint4* a, uint4* b, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) b[i] = a[i];
}


__global__ void fill(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = __float2bfloat16(((h & 0xffff) / 65536.f - 0.5f));
  }
}

// check runs both kernels on random data at an odd shape and prints the
// largest difference relative to the largest output.
void check(char* pool, float* ws, int* cnt, float* y) {
  const int M = 13, K = 1000, N = 904;  // N a multiple of 8: 16-byte rows
  __nv_bfloat16 *x = (__nv_bfloat16*)pool, *W = (__nv_bfloat16*)(pool + (1 << 20));
  float* y2;
  CK(cudaMalloc(&y2, M * N * 4));
  fill<<<64, 256>>>(x, (size_t)M * K, 1);
  fill<<<256, 256>>>(W, (size_t)K * N, 2);
  const int kper = 512, splits = 2;
  CK(cudaFuncSetAttribute(gemv<16, 8, 32>, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000));
  CK(cudaFuncSetAttribute(gemv_tc<2, 2, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000));
  gemv<16, 8, 32><<<((N + 255) / 256) * splits, NT, 16 * kper * 4 + 8 * 256 * 4>>>(x, W, ws, cnt, y, M, K, N, splits, kper);
  gemv_tc<2, 2, 2><<<((N + 255) / 256) * splits, NT, 16 * (kper / 2 + 4) * 4 + 2 * 16 * 256 * 4>>>(x, W, ws, cnt + 4096, y2, M, K, N, splits, kper);
  CK(cudaDeviceSynchronize());
  std::vector<float> a(M * N), b(M * N);
  CK(cudaMemcpy(a.data(), y, M * N * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b.data(), y2, M * N * 4, cudaMemcpyDeviceToHost));
  double md = 0, mx = 0;
  for (int i = 0; i < M * N; i++) { md = std::max(md, (double)std::fabs(a[i] - b[i])); mx = std::max(mx, (double)std::fabs(a[i])); }
  printf("check M%d K%d N%d: max |tc - simt| %.3g, max |simt| %.3g\n", M, K, N, md, mx);
}

int main() {
  char* pool = vt_ones();
  float *ws, *y;
  int* cnt;
  __nv_bfloat16* x;
  CK(cudaMalloc(&ws, 64 << 20));
  CK(cudaMalloc(&y, 16 << 20));
  CK(cudaMalloc(&cnt, 1 << 20));
  CK(cudaMemset(cnt, 0, 1 << 20));
  CK(cudaMalloc(&x, 1 << 20));
  CK(cudaMemset(x, 0, 1 << 20));
  // Copy ceiling: 1 GiB device to device, read + write bytes.
  const size_t cb = 256ull << 20;
  auto cts = vt_times([&](int r) { copyk<<<132 * 8, 512>>>((const uint4*)(pool + (r % 2) * cb), (uint4*)(pool + 4 * cb), cb / 16); }, 20);
  const double copy = 2.0 * cb / cts[cts.size() / 2] / 1e6;
  printf("copy %.3f TB/s\n", copy);
  const Shape shapes[] = {{4096, 6144}, {4096, 4096}, {4096, 28672}, {14336, 4096}};
  for (Shape s : shapes) {
    run<1, 8, 32>("u8", pool, 1, s, ws, cnt, y, x, copy);
    run_tc<1, 2, 1>("tc", pool, 1, s, ws, cnt, y, x, copy);
    run_tc<1, 4, 1>("tc", pool, 1, s, ws, cnt, y, x, copy);
    run_tc<1, 2, 2>("tc", pool, 1, s, ws, cnt, y, x, copy);
    run_tc<1, 4, 2>("tc", pool, 1, s, ws, cnt, y, x, copy);
    run_tc<1, 2, 4>("tc", pool, 1, s, ws, cnt, y, x, copy);
    run_tc<2, 2, 2>("tc", pool, 16, s, ws, cnt, y, x, copy);
    run_tc<2, 4, 2>("tc", pool, 16, s, ws, cnt, y, x, copy);
    run_tc<8, 2, 2>("tc", pool, 64, s, ws, cnt, y, x, copy);
  }
  check(pool, ws, cnt, y);
  return 0;
}
