// The layout check of the wgmma GEMV's ring stages (codegen/cuda/device/gemv_wgmma.cuh): one block
// runs the generator's copy and stage loop over a K x 264 weight (the tile its first 256 columns)
// and 8-64 rows, bf16 and f16, whole and partial rows and K, against a float64 reference on the
// host. Variant 0 is the library's descriptors; variants 1-3 swap the leading and stride byte
// offsets of A, B or both, and must fail (the check tells layouts apart).

#include <cuda_fp16.h>
#include <cstring>
#include "prelude.cuh"
#include "gemv_wgmma.cuh"
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>

// Variant of fz_gemv_wg_stage with the descriptor strides at run time.
template <int NB, bool BF16>
__device__ void stage_v(float (*acc)[NB * 4], u32 sb, int wg, int rows, int wbytes, int v) {
  const u32 alb = v & 1 ? 1024 : 16, asb = v & 1 ? 16 : 1024;
  const u32 blb = v & 2 ? rows * 16 : 128, bsb = v & 2 ? 128 : rows * 16;
  fz_wgmma_fence();
#pragma unroll
  for (int s = 0; s < 2; s++) {
    const u64 db = fz_wg_desc(sb + wbytes + s * 256, blb, bsb, 0);
#pragma unroll
    for (int t = 0; t < 2; t++)
      fz_wgmma_tn<NB * 8, BF16>(acc[t], fz_wg_desc(sb + (2 * wg + t) * rows * 128 + s * 2048, alb, asb, 1), db);
  }
  fz_wgmma_commit();
  fz_wgmma_wait<0>();
}

template <int NB, bool BF16>
__global__ void __launch_bounds__(256, 1) kern(const u16* W, const u16* X, float* out, int K, int ldw, int mr, int v) {
  extern __shared__ __align__(16) unsigned char dsm[];
  unsigned char* ring = dsm + ((1024u - (fz_smem_addr(dsm) & 1023u)) & 1023u);
  const int tid = threadIdx.x, wg = tid >> 7;
  const int ROWS = 32, WB = 32 * 256 * 2, SB = WB + 64 * ROWS * 2, ST = 6;
  const int wc = tid & 31, xm = tid >> 2, xc = tid & 3;
  const int nst = (K + ROWS - 1) / ROWS;
  auto issue = [&](int st) {
    unsigned char* sb = ring + (st % ST) * SB;
    const int kb = st * ROWS;
    for (int i = 0; i < ROWS / 8; i++) {
      const int row = (tid >> 5) + 8 * i;
      const bool ok = kb + row < K;
      fz_cp16b(sb + fz_gemv_wg_woff(row, wc, ROWS), W + (size_t)(ok ? kb + row : 0) * ldw + wc * 8, ok ? 16 : 0);
    }
    if (xm < NB * 8) {
      const int kx = kb + xc * 8;
      const int bytes = xm < mr ? max(0, min(16, 2 * (K - kx))) : 0;
      fz_cp16b(sb + fz_gemv_wg_xoff(xm, xc, ROWS, WB), X + (size_t)(xm < mr ? xm : 0) * K + (bytes > 0 ? kx : 0), bytes);
    }
  };
  float acc[2][NB * 4];
  for (int i = 0; i < NB * 8; i++) (&acc[0][0])[i] = 0.f;
  for (int s = 0; s < ST - 1; s++) { if (s < nst) issue(s); fz_cp_commit(); }
  for (int st = 0; st < nst; st++) {
    fz_cp_wait<ST - 2>();
    fz_fence_proxy_async();
    __syncthreads();
    if (st + ST - 1 < nst) issue(st + ST - 1);
    fz_cp_commit();
    const u32 sb = fz_smem_addr(ring + (st % ST) * SB);
    if (v == 0) fz_gemv_wg_stage<NB, BF16>(acc, sb, wg, ROWS, WB);
    else stage_v<NB, BF16>(acc, sb, wg, ROWS, WB, v);
  }
  fz_cp_wait<0>();
  __syncthreads();
  fz_gemv_wg_store<NB>(acc, (float*)ring, 256, wg);
  __syncthreads();
  for (int e = tid; e < mr * 256; e += 256) out[e] = ((float*)ring)[e];
}

static unsigned short tobits(float f, bool bf) {
  if (bf) { unsigned u; memcpy(&u, &f, 4); u += 0x7fff + ((u >> 16) & 1); return u >> 16; }
  __half h = __float2half(f); unsigned short s; memcpy(&s, &h, 2); return s;
}
static float frombits(unsigned short s, bool bf) {
  if (bf) { unsigned u = (unsigned)s << 16; float f; memcpy(&f, &u, 4); return f; }
  __half h; memcpy(&h, &s, 2); return __half2float(h);
}

template <int NB, bool BF16>
double run(int K, int mr, int v) {
  const int ldw = 264;  // a wider weight: the tile is its first 256 columns
  std::vector<unsigned short> w((size_t)K * ldw), x((size_t)64 * K);
  std::vector<float> wf(w.size()), xf(x.size());
  srand(K * 7 + mr + NB);
  for (size_t i = 0; i < w.size(); i++) { w[i] = tobits((rand() % 2001 - 1000) / 1000.f, BF16); wf[i] = frombits(w[i], BF16); }
  for (size_t i = 0; i < x.size(); i++) { x[i] = tobits((rand() % 2001 - 1000) / 1000.f, BF16); xf[i] = frombits(x[i], BF16); }
  u16 *dw, *dx; float* dout;
  cudaMalloc(&dw, w.size() * 2); cudaMalloc(&dx, x.size() * 2); cudaMalloc(&dout, 64 * 256 * 4);
  cudaMemcpy(dw, w.data(), w.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dx, x.data(), x.size() * 2, cudaMemcpyHostToDevice);
  cudaMemset(dout, 0xff, 64 * 256 * 4);
  const int smem = 6 * (32 * 256 * 2 + 64 * 64) + 1024;
  cudaFuncSetAttribute(kern<NB, BF16>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  kern<NB, BF16><<<1, 256, smem>>>(dw, dx, dout, K, ldw, mr, v);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) { printf("  error %s\n", cudaGetErrorString(e)); exit(1); }
  std::vector<float> out(64 * 256);
  cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost);
  double worst = 0;
  for (int n = 0; n < mr; n++)
    for (int c = 0; c < 256; c++) {
      double ref = 0;
      for (int k = 0; k < K; k++) ref += (double)xf[(size_t)n * K + k] * wf[(size_t)k * ldw + c];
      double err = fabs(out[n * 256 + c] - ref);
      if (!(err <= worst)) worst = err;  // NaN makes it NaN
    }
  cudaFree(dw); cudaFree(dx); cudaFree(dout);
  return worst;
}

int main() {
  const int Ks[] = {200, 1000};
  for (int v = 0; v < 4; v++) {
    printf("variant %d (A lbo/sbo %s, B lbo/sbo %s)\n", v, v & 1 ? "swapped" : "16/1024", v & 2 ? "swapped" : "128/512");
    for (int K : Ks) {
      printf("  K=%d bf16 NB1 %g NB2 %g NB4 %g NB8 %g | f16 NB1 %g NB8 %g | partial rows NB8 mr61 %g NB2 mr9 %g\n", K,
             run<1, true>(K, 8, v), run<2, true>(K, 16, v), run<4, true>(K, 32, v), run<8, true>(K, 64, v),
             run<1, false>(K, 8, v), run<8, false>(K, 64, v), run<8, true>(K, 61, v), run<2, true>(K, 9, v));
    }
  }
  return 0;
}
