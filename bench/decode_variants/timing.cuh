// How the decode variants' programs (harness.cu, read_floor.cu, loader.cu)
// time a kernel, the way fuser bench does: warm-up launches, then a
// kernel that spins for 5 ms so that the timed launches queue behind it
// (the host's launch cost stays out of the times), then each launch
// between two events. The callers rotate their buffers so that every
// launch reads from DRAM.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
// VT_POOL is the span the programs rotate their buffers over: 1.4 GB, far
// past the 60 MB L2, so that every launch reads from DRAM.
constexpr size_t VT_POOL = 1400ull << 20;
// vt_ones is a VT_POOL buffer of bytes 1 (the copies the readers rotate
// over; the value only has to be known).
inline char* vt_ones() {
  char* p;
  CK(cudaMalloc(&p, VT_POOL));
  CK(cudaMemset(p, 1, VT_POOL));
  return p;
}
// vt_spin keeps the GPU busy for ns nanoseconds.
__global__ void vt_spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
// vt_times runs launch(r) for r = 0 .. 4, then for r = 0 .. n - 1 behind a
// spin, each between two events; it returns those n times in µs, sorted.
template <class F> std::vector<float> vt_times(F launch, int n) {
  for (int r = 0; r < 5; r++) launch(r);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> ea(n), eb(n);
  for (int r = 0; r < n; r++) { CK(cudaEventCreate(&ea[r])); CK(cudaEventCreate(&eb[r])); }
  vt_spin<<<1, 32>>>(5000000);
  for (int r = 0; r < n; r++) { cudaEventRecord(ea[r]); launch(r); cudaEventRecord(eb[r]); }
  CK(cudaDeviceSynchronize());
  CK(cudaGetLastError());
  std::vector<float> ts(n);
  for (int r = 0; r < n; r++) {
    float ms;
    CK(cudaEventElapsedTime(&ms, ea[r], eb[r]));
    ts[r] = ms * 1e3f;
    CK(cudaEventDestroy(ea[r]));
    CK(cudaEventDestroy(eb[r]));
  }
  std::sort(ts.begin(), ts.end());
  return ts;
}
// vt_back_to_back is the mean time in µs of launch(r), r = 0 .. n - 1,
// issued back to back behind a spin between one pair of events.
template <class F> float vt_back_to_back(F launch, int n) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  vt_spin<<<1, 32>>>(5000000);
  cudaEventRecord(e0);
  for (int r = 0; r < n; r++) launch(r);
  cudaEventRecord(e1);
  CK(cudaDeviceSynchronize());
  float ms;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return ms * 1e3f / n;
}
