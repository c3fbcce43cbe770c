/*
 * The tensor-core GEMV for 2 to 64 rows on sm_90a (codegen/cuda/gemv_wgmma.go
 * instantiates it when the launch says wgmma), and the GEMM for more rows
 * built on its stages (codegen/cuda/gemm_wgmma.go): the weight is the A operand
 * of wgmma m64nNk16, read from shared memory M-major (transposed), and the
 * rows of the left operand its B operand, K-major, so that the weight,
 * read once, feeds every row: y^T = W^T x^T, N = 8 to 64 rows (128 in
 * the GEMM).
 *
 * A ring stage holds 32 positions of K (plan.GemvRingRows) of the tile's 256
 * columns and of the left operand's rows. Its weight tile is four 64-column
 * groups, each 32 rows of 128 bytes, in the 128-byte swizzled layout: row
 * r's 16-byte chunk c lies at chunk c ^ (r % 8) of its line, so a stage
 * must start 1024-byte aligned. The descriptor's stride (SBO) steps 8 rows,
 * 1024 bytes; its leading offset is unused, one group being one m64 tile.
 * The rows follow without swizzle, in 8-row by 16-byte core matrices:
 * chunk c (positions 8c .. 8c+7) of row n at (n / 8) 512 + c 128 + (n % 8) 16,
 * the leading offset (LBO, one chunk of K to the next) 128 bytes and the
 * stride (SBO, 8 rows to the next 8) 512.
 *
 * Warpgroup wg of the block's two takes column groups 2wg and 2wg+1 and all
 * positions of a stage: two k16 steps by two m64 tiles a stage. Its
 * accumulators follow wgmma's D fragment: value i of a thread (warp w of
 * the group, lane 4g + q) is column 16w + g + 8 ((i / 2) % 2) of its m64
 * tile and row 8 (i / 4) + 2q + i % 2.
 *
 * cp.async writes a stage through the generic proxy and wgmma reads it
 * through the async proxy: every thread fences the proxies
 * (fz_fence_proxy_async) after its copies land and before the barrier
 * that precedes the stage's wgmmas.
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */
// fz_gemv_wg_woff is the byte offset in a stage of 16-byte chunk wc (the
// tile's columns 8wc .. 8wc+7) of weight row r; rows is the stage's rows.
FZ_DEV int fz_gemv_wg_woff(int r, int wc, int rows) { return (wc >> 3) * rows * 128 + r * 128 + (((wc & 7) ^ (r & 7)) << 4); }
// fz_gemv_wg_xoff is the byte offset in a stage of chunk c (positions
// 8c .. 8c+7) of left-operand row n; wbytes is the stage's weight tile.
FZ_DEV int fz_gemv_wg_xoff(int n, int c, int rows, int wbytes) { return wbytes + (n >> 3) * rows * 16 + c * 128 + (n & 7) * 16; }
// fz_wg_desc is a wgmma shared-memory matrix descriptor: the address, the
// leading and stride byte offsets (16-byte units) and the swizzle mode
// (0 none, 1 128-byte).
FZ_DEV u64 fz_wg_desc(u32 addr, u32 lbo, u32 sbo, u32 swz) {
  return (u64)((addr & 0x3ffffu) >> 4) | ((u64)(lbo >> 4) << 16) | ((u64)(sbo >> 4) << 32) | ((u64)swz << 62);
}
FZ_DEV void fz_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
FZ_DEV void fz_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
FZ_DEV void fz_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> FZ_DEV void fz_wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory"); }
// fz_wgmma_tn<N, BF16> accumulates into d (N/2 values a thread) the m64nNk16
// product of the M-major A at da and the K-major B at db.
template <int N, bool BF16> FZ_DEV void fz_wgmma_tn(float* d, u64 da, u64 db);
#define FZ_WGMMA_TN8(BF, T) \
  template <> __device__ __forceinline__ void fz_wgmma_tn<8, BF>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n8k16.f32." T "." T " {%0, %1, %2, %3}, %4, %5, p, 1, 1, 1, 0;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) \
      : "l"(da), "l"(db), "n"(1)); \
  }
FZ_WGMMA_TN8(true, "bf16")
FZ_WGMMA_TN8(false, "f16")
#undef FZ_WGMMA_TN8
#define FZ_WGMMA_TN16(BF, T) \
  template <> __device__ __forceinline__ void fz_wgmma_tn<16, BF>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n16k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 1, 0;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]) \
      : "l"(da), "l"(db), "n"(1)); \
  }
FZ_WGMMA_TN16(true, "bf16")
FZ_WGMMA_TN16(false, "f16")
#undef FZ_WGMMA_TN16
#define FZ_WGMMA_TN32(BF, T) \
  template <> __device__ __forceinline__ void fz_wgmma_tn<32, BF>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n32k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 1, 0;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]) \
      : "l"(da), "l"(db), "n"(1)); \
  }
FZ_WGMMA_TN32(true, "bf16")
FZ_WGMMA_TN32(false, "f16")
#undef FZ_WGMMA_TN32
#define FZ_WGMMA_TN64(BF, T) \
  template <> __device__ __forceinline__ void fz_wgmma_tn<64, BF>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 1, 0;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
      : "l"(da), "l"(db), "n"(1)); \
  }
FZ_WGMMA_TN64(true, "bf16")
FZ_WGMMA_TN64(false, "f16")
#undef FZ_WGMMA_TN64
#define FZ_WGMMA_TN128(BF, T) \
  template <> __device__ __forceinline__ void fz_wgmma_tn<128, BF>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 1, 0;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
      : "l"(da), "l"(db), "n"(1)); \
  }
FZ_WGMMA_TN128(true, "bf16")
FZ_WGMMA_TN128(false, "f16")
#undef FZ_WGMMA_TN128

// fz_gemv_wg_stage issues a warpgroup's wgmmas over one ring stage (rows
// positions, a multiple of 16; 8·NB rows of the left operand) as one
// group: da describes the stage's first m64 tile of the warpgroup's
// columns, db its left-operand rows, whose next 16 positions lie bstep
// descriptor units (16 bytes) on; the caller waits for the group before
// the stage is refilled.
template <int NB, bool BF16>
FZ_DEV void fz_gemv_wg_stage(float (*acc)[NB * 4], u64 da, u64 db, int rows, int bstep) {
  fz_wgmma_fence();
#pragma unroll
  for (int s = 0; s < rows / 16; s++) {
#pragma unroll
    for (int t = 0; t < 2; t++)
      fz_wgmma_tn<NB * 8, BF16>(acc[t], da + (u64)((t * rows * 128 + s * 16 * 128) >> 4), db + (u64)(s * bstep));
  }
  fz_wgmma_commit();
}

// fz_gemv_wg_store writes warpgroup wg's sums to res[n * tn + c]: row n of
// the left operand, column c of the tile.
template <int NB>
FZ_DEV void fz_gemv_wg_store(float (*acc)[NB * 4], float* res, int tn, int wg) {
  const int w = (threadIdx.x >> 5) & 3, g = (threadIdx.x & 31) >> 2, q = threadIdx.x & 3;
#pragma unroll
  for (int t = 0; t < 2; t++)
#pragma unroll
    for (int i = 0; i < NB * 4; i++)
      res[(8 * (i >> 2) + 2 * q + (i & 1)) * tn + 128 * wg + 64 * t + 16 * w + g + 8 * ((i >> 1) & 1)] = acc[t][i];
}
