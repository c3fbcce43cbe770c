// Times one generated decode attention kernel (k01_attention_attention of
// the kernels.cu named by KFILE, from `fuser build bench/specs/decode_attention.fu`)
// at a shape, as fuser bench does: K/V copies rotated over 1.4 GB, a launch
// between two events, all queued behind a spinning kernel (median, min);
// and the same launches back to back between one pair. Prints the output's
// sum, so that variants of one kernel can be compared. Built and run by
// bench/decode_variants.sh. Usage: harness B L GRIDX SMEM NAME [ORDER].
// Built with -DPAGED, it runs the kernel of bench/specs/decode_attention_paged.fu
// (pages of 16 tokens, every sequence L keys) over a pool of B·L/16 pages
// that sequence b owns in the order ORDER: "shuffled" (as fuser bench's
// page tables, a random permutation of the pool) or "ordered" (sequence b
// owns pages b·L/16 onwards, in turn). Built with -DNTH=256, it launches
// blocks of 256 threads (the 8-warp kernel of a wide decode plan). The
// kernel's tensor map (its last parameter, codegen.RowMap) is encoded here
// for each rotated copy, as runtime.RowMap encodes it.
#include KFILE
#include <cuda.h>
#ifndef NTH
#define NTH 128
#endif
#include <cmath>
#include <cstring>
#include "timing.cuh"
__global__ void kfill(u16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed; x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
    float f = ((x & 0xffff) / 65536.f - 0.5f) * 2.f;
    unsigned u = __float_as_uint(f); p[i] = (u16)((u + 0x8000u) >> 16);
  }
}
int main(int argc, char** argv) {
  if (argc < 6) { fprintf(stderr, "usage: harness B L GRIDX SMEM NAME [ORDER]\n"); return 2; }
  const long B = atol(argv[1]), L = atol(argv[2]), splits = atol(argv[3]), smem = atol(argv[4]);
  const char* name = argv[5];
#ifdef PAGED
  const char* order = argc > 6 ? argv[6] : "shuffled";
  if (L % 16 != 0) { fprintf(stderr, "paged: L must be a multiple of the page, 16\n"); return 2; }
  const long np = B * ((L + 15) / 16);
  std::vector<int> indptr(B + 1), last(B), pages(np);
  for (long b = 0; b < B; b++) { indptr[b + 1] = (int)((b + 1) * ((L + 15) / 16)); last[b] = (int)(L - ((L + 15) / 16 - 1) * 16); }
  for (long i = 0; i < np; i++) pages[i] = (int)i;
  if (strcmp(order, "ordered") != 0) {
    unsigned x = 12345u;
    for (long i = np - 1; i > 0; i--) { x = x * 1664525u + 1013904223u; std::swap(pages[i], pages[x % (unsigned)(i + 1)]); }
  }
  int *dindptr, *dlast, *dpages;
  CK(cudaMalloc(&dindptr, (B + 1) * 4)); CK(cudaMalloc(&dlast, B * 4)); CK(cudaMalloc(&dpages, np * 4));
  CK(cudaMemcpy(dindptr, indptr.data(), (B + 1) * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dlast, last.data(), B * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dpages, pages.data(), np * 4, cudaMemcpyHostToDevice));
#endif
  const long S = 1, T = L - 1;
  const size_t qn = B * 32 * 128, kvn = 2ull * B * 8 * L * 128, on = qn;
  const size_t kvb = kvn * 2;
  const int rot = std::max<size_t>(1, VT_POOL / kvb);
  u16 *q, *kv, *o;
  CK(cudaMalloc(&q, qn * 2)); CK(cudaMalloc(&kv, kvb * rot)); CK(cudaMalloc(&o, on * 2));
  kfill<<<1024, 256>>>(q, qn, 7); kfill<<<4096, 256>>>(kv, kvn * rot, 11);
  CK(cudaFuncSetAttribute(k01_attention_attention, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  // Rows of 128 elements from each copy's base, in boxes of 16 rows.
  std::vector<CUtensorMap> maps(rot);
  for (int r = 0; r < rot; r++) {
    cuuint64_t dims[3] = {64, 0x7fffffff, 2}, strides[2] = {256, 128};
    cuuint32_t box[3] = {64, 16, 2}, es[3] = {1, 1, 1};
    if (cuTensorMapEncodeTiled(&maps[r], CU_TENSOR_MAP_DATA_TYPE_UINT16, 3, kv + (size_t)r * kvn, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
      fprintf(stderr, "cuTensorMapEncodeTiled failed\n");
      return 1;
    }
  }
  const auto map = [&](int r) { return *reinterpret_cast<const fz_tmap*>(&maps[r % rot]); };
  dim3 grid(splits, 8, B);
#ifdef PAGED
  auto launch = [&](int r) { k01_attention_attention<<<grid, NTH, smem>>>(q, kv + (size_t)(r % rot) * kvn, dindptr, dlast, dpages, o, B, S, T, np, np, map(r)); };
#else
  auto launch = [&](int r) { k01_attention_attention<<<grid, NTH, smem>>>(q, kv + (size_t)(r % rot) * kvn, o, B, S, T, map(r)); };
#endif
  launch(0); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  std::vector<u16> h(on); CK(cudaMemcpy(h.data(), o, on * 2, cudaMemcpyDeviceToHost));
  double sum = 0, asum = 0;
  for (size_t i = 0; i < on; i++) { unsigned u = (unsigned)h[i] << 16; float f; memcpy(&f, &u, 4); sum += f; asum += fabs(f); }
  const int N = 50;
  const std::vector<float> ts = vt_times(launch, N);
  const double b2b = vt_back_to_back(launch, N);
  printf("%-10s B%ld L%ld grid %ldx8x%ld: per-launch median %.2f us (min %.2f) %.2f TB/s | back-to-back %.2f us %.2f TB/s | out sum %.6f abs %.4f\n",
         name, B, L, splits, B, ts[N / 2], ts[0], kvb / ts[N / 2] / 1e6, b2b, kvb / b2b / 1e6, sum, asum);
  return 0;
}
