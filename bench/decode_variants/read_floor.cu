// The read floor of the decode benchmark's shapes: how fast any kernel can
// read a shape's K and V bytes once, timed as harness.cu times the decode
// kernel (a launch between two events, queued behind a spinning kernel;
// copies rotated over 1.4 GB so that every launch reads from DRAM; median
// of 50). The reader is plain 16-byte loads: each block streams a
// contiguous share of the bytes, U loads in flight a thread. It sweeps the
// block count, block size and U, and prints every configuration, the best,
// and an empty kernel's time (the launch alone). Built and run by
// bench/decode_variants.sh; usage: read_floor BYTES...
#include "timing.cuh"
__global__ void kempty() {}
// kread reads n16 16-byte words from p, block b the b-th contiguous share.
// The loads feed an xor that decides a store to out, so they are not dead;
// the buffer's bytes are all 1, so the xor (0 or 0x01010101) never stores.
template <int U>
__global__ void kread(const uint4* p, size_t n16, unsigned* out) {
  const size_t per = (n16 + gridDim.x - 1) / gridDim.x;
  const size_t a = blockIdx.x * per, b = a + per < n16 ? a + per : n16;
  unsigned x = 0;
  for (size_t i = a + threadIdx.x; i < b; i += (size_t)U * blockDim.x) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      const size_t k = i + (size_t)u * blockDim.x;
      if (k < b) asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(p + k));
      else v[u] = make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < U; u++) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (x == 0x9e3779b9u) out[0] = x;
}
int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: read_floor BYTES...\n"); return 2; }
  char* const buf = vt_ones();
  unsigned* out;
  CK(cudaMalloc(&out, 4));
  const int N = 50;
  const auto timeit = [&](auto launch) { return vt_times(launch, N)[N / 2]; };
  printf("empty kernel: per-launch median %.2f us\n", timeit([&](int) { kempty<<<1, 32>>>(); }));
  for (int i = 1; i < argc; i++) {
    const size_t n = strtoull(argv[i], nullptr, 10) / 16 * 16;
    if (n == 0 || n > VT_POOL) { fprintf(stderr, "read_floor: %s bytes: not between 16 and %zu\n", argv[i], VT_POOL); return 2; }
    const int rot = (int)std::max<size_t>(1, VT_POOL / n);
    float best = 1e30f;
    int bb = 0, bt = 0, bu = 0;
    for (int blocks : {128, 132, 264, 528, 1056, 2112, 4224}) {
      for (int th : {256, 512, 1024}) {
        for (int u : {4, 8}) {
          const float t = timeit([&](int r) {
            const uint4* p = (const uint4*)(buf + (size_t)(r % rot) * n);
            if (u == 4) kread<4><<<blocks, th>>>(p, n / 16, out);
            else kread<8><<<blocks, th>>>(p, n / 16, out);
          });
          printf("read %zu B, %d blocks x %d threads, %d loads in flight: per-launch median %.2f us %.2f TB/s\n", n, blocks, th, u, t, n / t / 1e6);
          if (t < best) { best = t; bb = blocks; bt = th; bu = u; }
        }
      }
    }
    printf("floor %zu B: per-launch median %.2f us %.2f TB/s (%d blocks x %d threads, %d loads in flight)\n", n, best, n / best / 1e6, bb, bt, bu);
  }
  return 0;
}
