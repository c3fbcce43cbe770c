/*
 * The tensor-core GEMV for 2 to 64 rows on sm_90a (codegen/cuda/gemv_mma.go
 * instantiates it when the launch says wgmma, gemv_wgmma.go), and the GEMM
 * for more rows built on its stages (codegen/cuda/gemm_wgmma.go): the weight is the A operand
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

// fz_wg_ring_copy runs the stage loop of the wgmma GEMV and GEMM whose
// stages every thread's cp.async copies fill: issue(st, offset) copies
// stage st (of count) to that ring offset, and descriptors da and db
// address the first stage's weight groups of this warpgroup and its rows
// (ROWS positions a stage of SB bytes, the rows' next k16 slice BSTEP
// descriptor units on). STAGES - 2 stages are in flight ahead of the one
// multiplied; a stage is refilled two steps after it was read, once the
// wgmma wait of the step between has retired it (fz_wg_ring_tma keeps
// one more in flight). It returns with every wgmma and copy retired.
template <int NB, bool BF16, int STAGES, int SB, int ROWS, int BSTEP, class I, class Issue>
FZ_DEV void fz_wg_ring_copy(float (*acc)[NB * 4], const I count, const u64 da, const u64 db, Issue&& issue) {
  constexpr int AHEAD = STAGES - 2, LAST = (STAGES - 1) * SB;
  for (int s = 0; s < AHEAD; s++) {
    if (s < count) issue(s, s * SB);
    fz_cp_commit();
  }
  u32 rso = 0, wso = AHEAD * SB;
  for (I st = 0; st < count; st++) {
    fz_cp_wait<AHEAD - 1>();
    fz_fence_proxy_async();
    __syncthreads();
    if (st + AHEAD < count) issue(st + AHEAD, wso);
    fz_cp_commit();
    fz_gemv_wg_stage<NB, BF16>(acc, da + (rso >> 4), db + (rso >> 4), ROWS, BSTEP);
    fz_wgmma_wait<1>();
    rso = rso == LAST ? 0 : rso + SB;
    wso = wso == LAST ? 0 : wso + SB;
  }
  fz_wgmma_wait<0>();
  fz_cp_wait<0>();
}

// fz_gemv_wg_tile is the wgmma GEMV of NB n8 tiles of rows, with
// fz_gemv_mma_tile's contract; ring is aligned to 1024 bytes. Warpgroup wg
// of the two takes half the tile's columns over every position of a
// stage, so that the sums need no reduction between warps.
//
// A stage's copies and wgmmas are the loop's whole work, so their
// addressing is fixed before it: a thread's four weight chunks of a stage
// lie 1024 bytes apart in shared memory (rows r and r+8 share r's
// swizzle), its global addresses advance by a stage's rows times the
// weight's row stride, and the wgmma descriptors of a stage are those of
// the first stage plus the stage's offset. A stage with every position
// inside [k0, k1) copies without bounds checks; the last, partial one
// takes the checked copies. A weight whose K axis is not one stride (a
// view that reshapes it) takes the checked copies throughout.
template <class C, int NB>
FZ_DEV void fz_gemv_wg_tile(const C& c, const i64 ub, const i64 r0, const int mr, const i64 k0, const i64 k1, const i64* scol, unsigned char* ring, float* res) {
  constexpr int TN = C::GV_TN, ROWS = C::GV_ROWS, WB = ROWS * TN * 2;
  const int tid = threadIdx.x, wg = tid >> 7;
  const int wc = tid & 31, xm = tid >> 2, xc = (tid & 3) * 8;
  const i64 col = scol[wc * 8], cl = col >= 0 ? col : 0;
  const u16* ap = c.a(ub, r0 + (xm < mr ? xm : mr - 1), 0);
  const int ns = (int)((k1 - k0 + ROWS - 1) / ROWS), nfull = (int)((k1 - k0) / ROWS);
  const u32 rb = fz_smem_addr(ring);
  const u32 wsa = rb + fz_gemv_wg_woff(tid >> 5, wc, ROWS), xsa = rb + fz_gemv_wg_xoff(xm, xc >> 3, ROWS, WB);
  const int wbytes = col >= 0 ? 16 : 0, xbytes = xm < mr ? 16 : 0;
  i64 wrs = 0;
  const u16* wp = 0;
  if constexpr (C::BSIMPLE) {
    wrs = c.bks();
    wp = c.b(ub, k0 + (tid >> 5), cl);
  }
  auto issue = [&](int st, u32 so) {
    if constexpr (C::BSIMPLE) {
      if (st < nfull) {
        const u16* p = wp + (i64)st * ROWS * wrs;
#pragma unroll
        for (int i = 0; i < ROWS / 8; i++) fz_cp16s(wsa + so + i * 1024, p + i * 8 * wrs, wbytes);
        if (xm < NB * 8) fz_cp16s(xsa + so, ap + k0 + st * ROWS + xc, xbytes);
        return;
      }
    }
    const i64 kb = k0 + (i64)st * ROWS;
#pragma unroll
    for (int i = 0; i < ROWS / 8; i++) {
      const int row = (tid >> 5) + 8 * i;
      const bool ok = col >= 0 && kb + row < k1;
      const i64 kr = ok ? kb + row : k0;
      fz_cp16s(wsa + so + i * 1024, c.b(ub, kr, cl), ok ? 16 : 0);
    }
    if (xm < NB * 8) {
      const i64 kx = kb + xc;
      const int bytes = xm < mr ? (int)fz_max64(0, fz_min64(16, 2 * (k1 - kx))) : 0;
      fz_cp16s(xsa + so, ap + (bytes > 0 ? kx : k0), bytes);
    }
  };
  const u64 da = fz_wg_desc(rb + wg * 2 * ROWS * 128, 16, 1024, 1), db = fz_wg_desc(rb + WB, 128, ROWS * 16, 0);
  float acc[2][NB * 4];
#pragma unroll
  for (int i = 0; i < NB * 8; i++) (&acc[0][0])[i] = 0.f;
  fz_wg_ring_copy<NB, C::BF16, C::GV_STAGES, C::GV_STAGE_BYTES, ROWS, 2 * 128 / 16>(acc, ns, da, db, issue);
  __syncthreads();
  fz_gemv_wg_store<NB>(acc, res, TN, wg);
  __syncthreads();
}
