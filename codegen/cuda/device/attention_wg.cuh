/*
 * The prefill attention on Hopper's warpgroup tensor cores (sm_90a): the
 * FlashAttention loop of attention_flash.cuh's fz_att_prefill with both
 * products issued by wgmma from shared memory. Instantiated by
 * codegen/cuda/attention_flash.go when the launch plan says wgmma
 * (plan.PrefillWG sizes it); the context type C is the same as the
 * mma.sync kernels'.
 *
 * A block takes 128 query rows, two warpgroups of 64, and streams BC keys
 * a step through a ring of NST stages of K and V tiles. Every tile (the
 * queries', a stage's K and V) is rows of DH 16-bit elements stored as
 * DH/64 column blocks, each rows × 128 bytes in the 128-byte swizzle:
 * 16-byte chunk ch of row r lies at fz_att_wg_swz. The tiles start
 * 1024-byte aligned, so the swizzle the copies write is the one wgmma
 * reads.
 *
 * S = Q·Kᵀ is m64nBCk16 with both operands K-major (the head dim
 * contiguous): a k16 step is 32 bytes into a 128-byte line, and the
 * descriptor's stride (SBO) steps 8 rows, 1024 bytes. O += P·V is
 * m64nDHk16 with P from registers (the accumulator of S, converted by
 * fz_att_online into A fragments, the same layout as mma.sync's) and V
 * MN-major (the head dim contiguous, read transposed): the leading offset
 * (LBO) steps one 64-dim column block, rows × 128 bytes, and SBO 8 keys.
 * The accumulators of both follow wgmma's D fragment, which for a warp's
 * 16 rows is mma.sync's m16n8 C fragment repeated along N, so the online
 * softmax and the stores are the mma.sync kernel's.
 *
 * A stage whose keys all exist and whose K and V rows are each BC
 * consecutive rows of a tensor map over the keys (C::KSEQ: a contiguous
 * cache of one source, rows DH elements apart; the map views memory from
 * C::tbase() as rows of DH elements, boxes of 64 elements by BC rows,
 * 128-byte swizzled) is copied by the tensor copy engine: thread 0 issues
 * a box a column block of K and of V, completing on the stage's mbarrier.
 * Other stages (a tile's last keys, paged and ragged caches, a cascade's
 * two sources) and the query tile are copied by every thread with
 * cp.async, which fences the proxies (fz_fence_proxy_async) before the
 * block barrier that precedes the tile's wgmmas. The barrier also tells a
 * step that every warpgroup is done with the stage it refills. A map slot
 * is per SM and head dim and a function of its base alone, as the
 * decode's (attention_bulk.cuh).
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */

// ---- attention: the wgmma prefill (device/attention_wg.cuh) ----
// fz_att_wg_swz is the byte offset of 16-byte chunk ch of row r in a
// swizzled tile of ROWS rows.
template <int ROWS> FZ_DEV u32 fz_att_wg_swz(int r, int ch) { return (u32)((ch >> 3) * ROWS * 128 + r * 128 + (((ch & 7) ^ (r & 7)) << 4)); }
// fz_att_wg_ss<N, BF> accumulates into d (N/2 values a thread) the
// m64nNk16 product of A at da and Bᵀ at db, both K-major in shared memory.
template <int N, bool BF> FZ_DEV void fz_att_wg_ss(float* d, u64 da, u64 db);
// fz_att_wg_rs<N, BF> accumulates into d the m64nNk16 product of the A
// fragments a and B at db, MN-major in shared memory.
template <int N, bool BF> FZ_DEV void fz_att_wg_rs(float* d, const u32* a, u64 db);
#define FZ_ATT_WG_SS32(BF, T) \
  template <> __device__ __forceinline__ void fz_att_wg_ss<32, BF>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\nwgmma.mma_async.sync.aligned.m64n32k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 0, 0;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]) \
      : "l"(da), "l"(db)); \
  }
FZ_ATT_WG_SS32(true, "bf16")
FZ_ATT_WG_SS32(false, "f16")
#undef FZ_ATT_WG_SS32
#define FZ_ATT_WG_SS128(BF, T) \
  template <> __device__ __forceinline__ void fz_att_wg_ss<128, BF>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\nwgmma.mma_async.sync.aligned.m64n128k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
      : "l"(da), "l"(db)); \
  }
FZ_ATT_WG_SS128(true, "bf16")
FZ_ATT_WG_SS128(false, "f16")
#undef FZ_ATT_WG_SS128
#define FZ_ATT_WG_RS64(BF, T) \
  template <> __device__ __forceinline__ void fz_att_wg_rs<64, BF>(float* d, const u32* a, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\nwgmma.mma_async.sync.aligned.m64n64k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)); \
  }
FZ_ATT_WG_RS64(true, "bf16")
FZ_ATT_WG_RS64(false, "f16")
#undef FZ_ATT_WG_RS64
#define FZ_ATT_WG_RS128(BF, T) \
  template <> __device__ __forceinline__ void fz_att_wg_rs<128, BF>(float* d, const u32* a, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\nwgmma.mma_async.sync.aligned.m64n128k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)); \
  }
FZ_ATT_WG_RS128(true, "bf16")
FZ_ATT_WG_RS128(false, "f16")
#undef FZ_ATT_WG_RS128
#define FZ_ATT_WG_RS256(BF, T) \
  template <> __device__ __forceinline__ void fz_att_wg_rs<256, BF>(float* d, const u32* a, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\nwgmma.mma_async.sync.aligned.m64n256k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, p, 1, 1, 1;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127]) \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)); \
  }
FZ_ATT_WG_RS256(true, "bf16")
FZ_ATT_WG_RS256(false, "f16")
#undef FZ_ATT_WG_RS256

// fz_att_wg_rows stages ROWS rows of DH elements into the swizzled tile
// at s: row r from row(r), or zeros where row(r) is null. Whole aligned
// chunks go by cp.async (the caller commits the group), others through
// registers (fz_att_cp).
template <int DH, int ROWS, int NT, class R>
FZ_DEV void fz_att_wg_rows(u16* s, const R& row) {
  constexpr int CH = DH / 8;
#pragma unroll 2
  for (int e = threadIdx.x; e < ROWS * CH; e += NT) {
    const int r = e / CH, ch = e % CH;
    u16* dst = (u16*)((unsigned char*)s + fz_att_wg_swz<ROWS>(r, ch));
    const u16* src = row(r);
    if (src != nullptr) fz_att_cp(dst, src + ch * 8, 8);
    else *(uint4*)dst = make_uint4(0u, 0u, 0u, 0u);
  }
}

// The wgmma prefill's tensor-map slots: one per SM (FZ_TMA_SLOTS) and head
// dim (64, 128, 192, 256).
static __device__ __align__(128) u64 fz_att_wg_tmaps[4 * FZ_TMA_SLOTS * 16];
// fz_att_wg_tslot is the map slot of the calling thread's SM, or null.
template <int DH> FZ_DEV u64* fz_att_wg_tslot() {
  const u32 smid = fz_smid();
  return smid < FZ_TMA_SLOTS ? fz_att_wg_tmaps + ((DH / 64 - 1) * FZ_TMA_SLOTS + smid) * 16 : (u64*)0;
}
// fz_att_wg_tmap builds in sm and publishes to slot g the map of rows of
// DH elements from base in boxes of 64 by BC, unless the slot holds it
// already (its first word is the base; the rest depends on DH alone). All
// 32 lanes of one warp call it.
template <int DH, int BC> FZ_DEV void fz_att_wg_tmap(u64* sm, u64* g, const void* base) {
#if FZ_TMA
  u64 have;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(have) : "l"(g) : "memory");
  if (__shfl_sync(0xffffffffu, have, 0) == (u64)base) return;
#endif
  fz_tmap2d_build<3>(sm, g, base, DH, FZ_ATT_TROWS, DH * 2, 64, BC);
}
// fz_att_wg_mrow is the map row of the row at p from base tb (rows of DH
// elements), or -1 where no box of BC rows from it is addressable.
template <int DH, int BC> FZ_DEV i64 fz_att_wg_mrow(const u16* p, const u16* tb) {
  const i64 d = p - tb;
  return d >= 0 && d % DH == 0 && d / DH <= (i64)FZ_ATT_TROWS - BC ? d / DH : -1;
}

// fz_att_prefill_wg is FlashAttention on wgmma. Block (query tile, head h,
// sequence b) takes query tiles of 128 rows (strided over gridDim.x, the
// last tile first: under a causal mask the last tiles see the most keys)
// against the key tiles the tile's rows can see, BC keys a step through a
// ring of NST stages in dynamic shared memory (plan.PrefillWG). Warpgroup
// wg owns rows 64wg .. 64wg + 63 and skips the tiles none of them sees.
template <int DH, int BC, int NST, bool BF, class C>
FZ_DEV void fz_att_prefill_wg(const C& c) {
  constexpr int BR = 128, NT = 256, NKS = DH / 16, NO = DH / 8, TILE = BC * DH;
  static_assert(DH % 64 == 0 && BC % 16 == 0 && NST >= 2, "fz_att_prefill_wg: a head dim of whole 128-byte lines, key steps of whole k16 steps, two stages or more");
  extern __shared__ __align__(16) u16 fz_att_dsm[];
  u16* const sq = (u16*)(((u64)fz_att_dsm + 1023) & ~(u64)1023);
  u16* const ring = sq + BR * DH;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wg = warp >> 2, gr = lane >> 2, tq = lane & 3;
  const u32 qa = fz_smem_addr(sq) + wg * 64 * 128, ra = fz_smem_addr(ring);
  const i64 B = c.nb(), H = c.nh(), S = c.nsq(), nqt = (S + BR - 1) / BR;
  __shared__ __align__(128) u64 fz_att_wg_tms[16];
  __shared__ __align__(8) u64 fz_att_wg_bar[NST];
  constexpr bool BULK = C::KSEQ && FZ_TMA;
  u64* const slot = BULK ? fz_att_wg_tslot<DH>() : (u64*)0;
  if (BULK && threadIdx.x == 0) {
    for (int i = 0; i < NST; i++) fz_mbar_init(fz_smem_addr(&fz_att_wg_bar[i]), 1);
  }
  u32 phase = 0; // a bit a stage: the parity of its mbarrier's next phase
  for (i64 b = blockIdx.z; b < B; b += gridDim.z) {
    for (i64 h = blockIdx.y; h < H; h += gridDim.y) {
      const i64 g = h / C::GRP;
      const i64 npre = c.npre(b, g), ntot = npre + c.nown(b, g), p0 = ntot - S;
      for (i64 x = blockIdx.x; x < nqt; x += gridDim.x) {
        const i64 q0 = (nqt - 1 - x) * BR, qn = fz_min64(S - q0, BR);
        i64 lo, hi;
        c.kbounds(p0 + q0, p0 + q0 + qn - 1, ntot, lo, hi);
        const i64 w0 = q0 + wg * 64, wl = fz_min64(w0 + 63, S - 1);
        const bool rows = w0 < S;
        i64 wlo = 0, whi = 0;
        if (rows) c.kbounds(p0 + w0, p0 + wl, ntot, wlo, whi);
        i64 pos[2];
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
          const i64 i = w0 + (warp & 3) * 16 + gr + 8 * hh;
          pos[hh] = p0 + (i < S ? i : S - 1);
        }
        const int ntile = (int)((hi - lo + BC - 1) / BC);
        // Whether tile t goes by the engine (the same answer in every
        // thread), and its K and V map rows.
        const auto bulk = [&](int t, i64& rk, i64& rv) {
          const i64 k0 = lo + (i64)t * BC;
          if (!BULK || slot == nullptr || k0 + BC > hi) return false;
          rk = fz_att_wg_mrow<DH, BC>(c.row(0, b, g, k0, npre), c.tbase());
          rv = fz_att_wg_mrow<DH, BC>(c.row(1, b, g, k0, npre), c.tbase());
          return rk >= 0 && rv >= 0;
        };
        const auto stage = [&](int t) {
          u16* const sk = ring + (t % NST) * 2 * TILE;
          const i64 k0 = lo + (i64)t * BC;
          i64 rk, rv;
          if (bulk(t, rk, rv)) {
            if (threadIdx.x == 0) {
              const u32 bar = fz_smem_addr(&fz_att_wg_bar[t % NST]), dk = fz_smem_addr(sk);
              fz_mbar_expect(bar, 4 * TILE);
#pragma unroll
              for (int cb = 0; cb < DH / 64; cb++) {
                fz_tma2d(dk + cb * BC * 128, slot, 64 * cb, (int)rk, bar);
                fz_tma2d(dk + 2 * TILE + cb * BC * 128, slot, 64 * cb, (int)rv, bar);
              }
            }
            return;
          }
          fz_att_wg_rows<DH, BC, NT>(sk, [&](int r) { return k0 + r < hi ? c.row(0, b, g, k0 + r, npre) : (const u16*)nullptr; });
          fz_att_wg_rows<DH, BC, NT>(sk + TILE, [&](int r) { return k0 + r < hi ? c.row(1, b, g, k0 + r, npre) : (const u16*)nullptr; });
        };
        if (BULK && warp == 0 && slot != nullptr && ntile > 0) fz_att_wg_tmap<DH, BC>(fz_att_wg_tms, slot, c.tbase());
        __syncthreads(); // the previous tile's reads of the shared tiles are done, and the map is built
        if (BULK && threadIdx.x == 0 && slot != nullptr && ntile > 0) fz_tmap_acquire(slot);
        fz_att_wg_rows<DH, BR, NT>(sq, [&](int r) { return q0 + r < S ? c.qrow(b, h, q0 + r) : (const u16*)nullptr; });
#pragma unroll 1
        for (int t = 0; t < NST - 1; t++) {
          if (t < ntile) stage(t);
          fz_cp_commit();
        }
        float o[NO][4], m[2] = {-FZ_INF, -FZ_INF}, l[2] = {0.f, 0.f};
#pragma unroll
        for (int i = 0; i < NO; i++) { o[i][0] = 0.f; o[i][1] = 0.f; o[i][2] = 0.f; o[i][3] = 0.f; }
#pragma unroll 1
        for (int t = 0; t < ntile; t++) {
          fz_cp_wait<NST - 2>(); // tile t's group (one group a step since)
          fz_fence_proxy_async();
          __syncthreads(); // tile t has landed, and stage t - 1 is read
          if (i64 rk, rv; bulk(t, rk, rv)) {
            fz_mbar_wait(fz_smem_addr(&fz_att_wg_bar[t % NST]), phase >> (t % NST) & 1u);
            phase ^= 1u << (t % NST);
          }
          if (t + NST - 1 < ntile) stage(t + NST - 1);
          fz_cp_commit();
          const i64 k0 = lo + (i64)t * BC;
          if (!rows || k0 >= whi || k0 + BC <= wlo) continue;
          const u32 ka = ra + (u32)((t % NST) * 4 * TILE), va = ka + 2 * TILE;
          float s[BC / 8][4];
#pragma unroll
          for (int n = 0; n < BC / 8; n++) { s[n][0] = 0.f; s[n][1] = 0.f; s[n][2] = 0.f; s[n][3] = 0.f; }
          fz_wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < NKS; kk++)
            fz_att_wg_ss<BC, BF>(&s[0][0], fz_wg_desc(qa + (kk >> 2) * BR * 128 + (kk & 3) * 32, 16, 1024, 1),
                                 fz_wg_desc(ka + (kk >> 2) * BC * 128 + (kk & 3) * 32, 16, 1024, 1));
          fz_wgmma_commit();
          fz_wgmma_wait<0>();
          const bool mask = k0 + BC > hi || c.tile_masked(p0 + w0, p0 + wl, k0, k0 + BC);
          u32 p[BC / 16][4];
          fz_att_online<BC, NO, BF>(c, s, m, l, o, p, pos, k0, hi, mask, tq);
          fz_wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < BC / 16; kk++) fz_att_wg_rs<DH, BF>(&o[0][0], p[kk], fz_wg_desc(va + kk * 16 * 128, BC * 128, 1024, 1));
          fz_wgmma_commit();
          fz_wgmma_wait<0>();
        }
        fz_cp_wait<0>();
        fz_att_lsum(l);
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
          const i64 i = w0 + (warp & 3) * 16 + gr + 8 * hh;
          if (i >= S) continue;
          const float inv = l[hh] > 0.f ? 1.f / l[hh] : 0.f;
#pragma unroll
          for (int n = 0; n < NO; n++) c.ost2(b, h, i, n * 8 + tq * 2, o[n][2 * hh] * inv, o[n][2 * hh + 1] * inv);
        }
      }
    }
  }
}
