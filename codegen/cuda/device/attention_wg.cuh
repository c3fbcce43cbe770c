/*
 * The prefill attention on Hopper's warpgroup tensor cores (sm_90a): the
 * FlashAttention loop of attention_flash.cuh's fz_att_prefill with both
 * products issued by wgmma from shared memory. Instantiated by
 * codegen/cuda/attention_flash.go when the launch plan says wgmma
 * (plan.PrefillWG sizes it); the context type C is the same as the
 * mma.sync kernels'.
 *
 * A block is two consumer warpgroups of 64 query rows each and a producer
 * warpgroup that fills a ring of NST stages of K and V tiles, BC keys a
 * stage (FlashAttention-3's warp specialization). Every tile (the
 * queries', a stage's K and V) is rows of DH 16-bit elements stored as
 * DH/64 column blocks, each rows × 128 bytes in the 128-byte swizzle:
 * 16-byte chunk ch of row r lies at fz_att_wg_swz. The tiles start
 * 1024-byte aligned, so the swizzle the copies write is the one wgmma
 * reads. The producer gives registers to the consumers (setmaxnreg): the
 * block starts with 168 a thread (64K over 384 threads, in steps of 8),
 * and a consumer's raise waits until the producer's release leaves enough,
 * so the producer's and two consumers' counts (fz_att_wg_pregs,
 * fz_att_wg_cregs) must not pass 3 × 168 (a consumer's scores,
 * probabilities and output take 160 registers at a head dim of 128).
 *
 * S = Q·Kᵀ is m64nBCk16 with both operands K-major (the head dim
 * contiguous): a k16 step is 32 bytes into a 128-byte line, and the
 * descriptor's stride (SBO) steps 8 rows, 1024 bytes. O += P·V is
 * m64nDHk16 with P from registers (the accumulator of S, turned into
 * probabilities by fz_att_scores and into A fragments by fz_att_probs,
 * the same layout as mma.sync's) and V
 * MN-major (the head dim contiguous, read transposed): the leading offset
 * (LBO) steps one 64-dim column block, rows × 128 bytes, and SBO 8 keys.
 * The accumulators of both follow wgmma's D fragment, which for a warp's
 * 16 rows is mma.sync's m16n8 C fragment repeated along N, so the online
 * softmax and the stores are the mma.sync kernel's.
 *
 * A stage is handed over by two mbarriers: full (one arrival, and the
 * bytes of the engine's copies) and empty (one arrival a consumer). A
 * stage whose keys all exist and whose K and V rows are each BC
 * consecutive rows of a tensor map over the keys (C::KSEQ: a contiguous
 * cache of one source, rows DH elements apart; the map views memory from
 * C::tbase() as rows of DH elements, boxes of 64 elements by BC rows,
 * 128-byte swizzled) is copied by the tensor copy engine: the producer's
 * first thread issues a box a column block of K and of V onto full. The
 * producer's 128 threads copy other stages (a tile's last keys, paged and
 * ragged caches, a cascade's two sources) by cp.async, and signal one such
 * stage when the next is issued: each waits for its own copies and fences
 * them for the async proxy, and after a barrier of the producer's threads
 * the first arrives on full. A consumer copies its 64 query rows itself.
 *
 * A consumer overlaps the softmax with the tensor cores: it issues the
 * next tile's Q·Kᵀ and this tile's P·V, waits for the first, runs the
 * softmax of the next tile's scores while P·V runs, then waits for it,
 * releases the stage, rescales the output and converts the probabilities
 * into P's fragments. No instruction writes a register that a wgmma in
 * flight reads or writes (ptxas would serialize every wgmma: its C7513
 * advisory, which the NVRTC tests fail on): the conversion waits for P·V,
 * and Q·Kᵀ's first k-step sets its accumulators instead of adding to
 * zeros written while P·V runs.
 * Tiles that none of its rows sees (under a causal mask or a window) it
 * releases unread, in order, after they are full, so that a stage's
 * arrivals always count toward the phase they belong to. A map slot is
 * per SM and head dim and a function of its base alone, as the decode's
 * (attention_bulk.cuh).
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */

// ---- attention: the wgmma prefill (device/attention_wg.cuh) ----
// fz_att_wg_swz is the byte offset of 16-byte chunk ch of row r in a
// swizzled tile of ROWS rows.
template <int ROWS> FZ_DEV u32 fz_att_wg_swz(int r, int ch) { return (u32)((ch >> 3) * ROWS * 128 + r * 128 + (((ch & 7) ^ (r & 7)) << 4)); }
// fz_att_wg_ss<N, BF, Z> accumulates into d (N/2 values a thread) the
// m64nNk16 product of A at da and Bᵀ at db, both K-major in shared memory;
// with Z, d is set to it (written, not read: no instruction need define d
// before).
template <int N, bool BF, bool Z> FZ_DEV void fz_att_wg_ss(float* d, u64 da, u64 db);
// fz_att_wg_rs<N, BF> accumulates into d the m64nNk16 product of the A
// fragments a and B at db, MN-major in shared memory.
template <int N, bool BF> FZ_DEV void fz_att_wg_rs(float* d, const u32* a, u64 db);
#define FZ_ATT_WG_SS32(BF, T, Z, CS, P) \
  template <> __device__ __forceinline__ void fz_att_wg_ss<32, BF, Z>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp." P ".u32 p, 1, 1;\nwgmma.mma_async.sync.aligned.m64n32k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 0, 0;\n}\n" \
      : CS(d[0]), CS(d[1]), CS(d[2]), CS(d[3]), CS(d[4]), CS(d[5]), CS(d[6]), CS(d[7]), \
        CS(d[8]), CS(d[9]), CS(d[10]), CS(d[11]), CS(d[12]), CS(d[13]), CS(d[14]), CS(d[15]) \
      : "l"(da), "l"(db)); \
  }
FZ_ATT_WG_SS32(true, "bf16", false, "+f", "eq")
FZ_ATT_WG_SS32(false, "f16", false, "+f", "eq")
FZ_ATT_WG_SS32(true, "bf16", true, "=f", "ne")
FZ_ATT_WG_SS32(false, "f16", true, "=f", "ne")
#undef FZ_ATT_WG_SS32
#define FZ_ATT_WG_SS128(BF, T, Z, CS, P) \
  template <> __device__ __forceinline__ void fz_att_wg_ss<128, BF, Z>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp." P ".u32 p, 1, 1;\nwgmma.mma_async.sync.aligned.m64n128k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n" \
      : CS(d[0]), CS(d[1]), CS(d[2]), CS(d[3]), CS(d[4]), CS(d[5]), CS(d[6]), CS(d[7]), \
        CS(d[8]), CS(d[9]), CS(d[10]), CS(d[11]), CS(d[12]), CS(d[13]), CS(d[14]), CS(d[15]), \
        CS(d[16]), CS(d[17]), CS(d[18]), CS(d[19]), CS(d[20]), CS(d[21]), CS(d[22]), CS(d[23]), \
        CS(d[24]), CS(d[25]), CS(d[26]), CS(d[27]), CS(d[28]), CS(d[29]), CS(d[30]), CS(d[31]), \
        CS(d[32]), CS(d[33]), CS(d[34]), CS(d[35]), CS(d[36]), CS(d[37]), CS(d[38]), CS(d[39]), \
        CS(d[40]), CS(d[41]), CS(d[42]), CS(d[43]), CS(d[44]), CS(d[45]), CS(d[46]), CS(d[47]), \
        CS(d[48]), CS(d[49]), CS(d[50]), CS(d[51]), CS(d[52]), CS(d[53]), CS(d[54]), CS(d[55]), \
        CS(d[56]), CS(d[57]), CS(d[58]), CS(d[59]), CS(d[60]), CS(d[61]), CS(d[62]), CS(d[63]) \
      : "l"(da), "l"(db)); \
  }
FZ_ATT_WG_SS128(true, "bf16", false, "+f", "eq")
FZ_ATT_WG_SS128(false, "f16", false, "+f", "eq")
FZ_ATT_WG_SS128(true, "bf16", true, "=f", "ne")
FZ_ATT_WG_SS128(false, "f16", true, "=f", "ne")
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

// fz_att_wg_rows stages rows r0 .. r0 + nr - 1 of DH elements into the
// swizzled tile of ROWS rows at s, thread tid of NT: row r from row(r), or
// zeros where row(r) is null. Whole aligned chunks go by cp.async (the
// caller commits the group), others through registers (fz_att_cp).
template <int DH, int ROWS, int NT, class R>
FZ_DEV void fz_att_wg_rows(u16* s, int r0, int nr, int tid, const R& row) {
  constexpr int CH = DH / 8;
#pragma unroll 1
  for (int e = tid; e < nr * CH; e += NT) {
    const int r = r0 + e / CH, ch = e % CH;
    u16* dst = (u16*)((unsigned char*)s + fz_att_wg_swz<ROWS>(r, ch));
    const u16* src = row(r);
    if (src != nullptr) fz_att_cp(dst, src + ch * 8, 8);
    else *(uint4*)dst = make_uint4(0u, 0u, 0u, 0u);
  }
}

// fz_bar_sync meets the n threads of named barrier id (0 is the block's
// __syncthreads).
FZ_DEV void fz_bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(n) : "memory"); }
// fz_att_wg_pregs<W> and fz_att_wg_cregs<W> are the registers a thread of
// the wgmma prefill's producer and of a consumer keeps, W: under a window
// (setmaxnreg: multiples of 8, changed by whole warpgroups). Measured by
// ptxas's spills: at 56 and 224 the kernels of the windowed specs spill 12
// bytes, at 72 and 216 those of a head dim of 256 with a softcap spill 60.
template <bool W> constexpr int fz_att_wg_pregs = W ? 72 : 56;
template <bool W> constexpr int fz_att_wg_cregs = W ? 216 : 224;
template <int N> FZ_DEV void fz_regs_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(N)); }
template <int N> FZ_DEV void fz_regs_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(N)); }

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

// fz_att_wg_tile is one query tile of a block: sequence b, head h of kv
// head g, npre prefix keys of ntot, query i at position p0 + i, the tile's
// first query q0 and its keys lo .. hi - 1.
struct fz_att_wg_tile {
  i64 b, h, g, npre, ntot, p0, q0, lo, hi;
};
// fz_att_wg_item sets the sequence b, head h and first query q0 of the
// block's query tile number i of BR rows and reports whether there is one.
// A block of a grid of (query tiles, heads, sequences) takes one, the
// last tile first (under a causal mask the last tiles see the most keys).
// Persistent blocks (C::PERSIST, plan.Launch.Persistent) take the items in
// turn, ordered longest first: the last query tile of every head and
// sequence, then the one before it, the heads of a sequence side by side
// (they share kv heads' keys in L2). fz_att_wg_at sets w to that tile.
// Every warpgroup walks the same tiles.
template <int BR, class C> FZ_DEV bool fz_att_wg_item(const C& c, int i, i64& b, i64& h, i64& q0) {
  const u32 nqt = (u32)((c.nsq() + BR - 1) / BR), nh = (u32)c.nh(), hb = nh * (u32)c.nb();
  if (!C::PERSIST) {
    if (i > 0 || blockIdx.x >= nqt || blockIdx.y >= nh || blockIdx.z * nh >= hb) return false;
    h = blockIdx.y;
    b = blockIdx.z;
    q0 = (i64)(nqt - 1 - blockIdx.x) * BR;
    return true;
  }
  const u32 gi = blockIdx.x + (u32)i * gridDim.x;
  if (gi >= nqt * hb) return false;
  const u32 x = gi / hb, r = gi - x * hb;
  h = r % nh;
  b = r / nh;
  q0 = (i64)(nqt - 1 - x) * BR;
  return true;
}
template <int BR, class C> FZ_DEV bool fz_att_wg_at(const C& c, int i, fz_att_wg_tile& w) {
  if (!fz_att_wg_item<BR>(c, i, w.b, w.h, w.q0)) return false;
  const i64 S = c.nsq();
  w.g = w.h / C::GRP;
  w.npre = c.npre(w.b, w.g);
  w.ntot = w.npre + c.nown(w.b, w.g);
  w.p0 = w.ntot - S;
  c.kbounds(w.p0 + w.q0, w.p0 + w.q0 + fz_min64(S - w.q0, BR) - 1, w.ntot, w.lo, w.hi);
  return true;
}

// fz_att_prefill_wg is FlashAttention on wgmma. A block takes query tiles
// of 128 rows of a head and sequence (fz_att_wg_item: one, or several in
// turn) against the key tiles the tile's rows can see, BC keys a step
// through a ring of NST stages in dynamic shared memory (plan.PrefillWG).
// Warpgroup w < 2 owns rows 64w .. 64w + 63 and skips the tiles none of
// them sees; warpgroup 2 fills the ring, running ahead into the block's
// next tile while the consumers finish one.
template <int DH, int BC, int NST, bool BF, class C>
FZ_DEV void fz_att_prefill_wg(const C& c) {
  constexpr int BR = 128, NKS = DH / 16, NO = DH / 8, TILE = BC * DH;
  static_assert(DH % 64 == 0 && BC % 16 == 0 && NST >= 2, "fz_att_prefill_wg: a head dim of whole 128-byte lines, key steps of whole k16 steps, two stages or more");
  constexpr int PREGS = fz_att_wg_pregs<C::WINDOW>, CREGS = fz_att_wg_cregs<C::WINDOW>;
  static_assert(PREGS + 2 * CREGS <= 3 * 168, "fz_att_prefill_wg: the warpgroups ask for more registers than the block holds");
  extern __shared__ __align__(16) u16 fz_att_dsm[];
  // The query tile and the ring, 1024-byte aligned; each role derives
  // what it needs after setmaxnreg, so that little is live across it.
  const auto tiles = [&]() { return (u16*)(((u64)fz_att_dsm + 1023) & ~(u64)1023); };
  const int wg = threadIdx.x >> 7;
  __shared__ __align__(128) u64 fz_att_wg_tms[16];
  __shared__ __align__(8) u64 fz_att_wg_full[NST], fz_att_wg_empty[NST];
  if (threadIdx.x == 0) {
    for (int i = 0; i < NST; i++) {
      fz_mbar_init(fz_smem_addr(&fz_att_wg_full[i]), 1);
      fz_mbar_init(fz_smem_addr(&fz_att_wg_empty[i]), 2);
    }
  }
  __syncthreads();
  const auto full = [&](u32 j) { return fz_smem_addr(&fz_att_wg_full[j % NST]); };
  const auto empty = [&](u32 j) { return fz_smem_addr(&fz_att_wg_empty[j % NST]); };
  if (wg == 2) {
    fz_regs_dec<PREGS>();
    const int tid = threadIdx.x & 127;
    u16* const ring = tiles() + BR * DH;
    constexpr bool BULK = C::KSEQ && FZ_TMA;
    u64* const slot = BULK ? fz_att_wg_tslot<DH>() : (u64*)0;
    u32 it = 0; // the ring's fills so far
    fz_att_wg_tile w;
    for (int wi = 0; fz_att_wg_at<BR>(c, wi, w); wi++) {
      const i64 b = w.b, g = w.g, npre = w.npre, lo = w.lo, hi = w.hi;
      const int ntile = (int)((hi - lo + BC - 1) / BC);
      if (ntile == 0) continue;
      if (BULK && slot != nullptr && tid < 32) {
        fz_att_wg_tmap<DH, BC>(fz_att_wg_tms, slot, c.tbase());
        if (tid == 0) fz_tmap_acquire(slot);
      }
      // pend is the fill whose cp.async copies are issued and not yet
      // signalled; signal waits for them (all: for every group, else for
      // all but the last).
      i64 pend = -1;
      const auto signal = [&](bool all) {
        if (all) fz_cp_wait<0>();
        else fz_cp_wait<1>();
        fz_fence_proxy_async();
        fz_bar_sync(3, 128);
        if (tid == 0) fz_mbar_arrive(full((u32)pend));
        pend = -1;
      };
#pragma unroll 1
      for (int t = 0; t < ntile; t++, it++) {
        const i64 k0 = lo + (i64)t * BC;
        i64 rk = -1, rv = -1;
        if (BULK && slot != nullptr && k0 + BC <= hi) {
          rk = fz_att_wg_mrow<DH, BC>(c.row(0, b, g, k0, npre), c.tbase());
          rv = fz_att_wg_mrow<DH, BC>(c.row(1, b, g, k0, npre), c.tbase());
        }
        const bool bulk = rk >= 0 && rv >= 0;
        if (bulk && pend >= 0) signal(true);
        fz_mbar_wait(empty(it), ((it / NST) & 1u) ^ 1u);
        u16* const sk = ring + (it % NST) * 2 * TILE;
        if (bulk) {
          if (tid == 0) {
            const u32 bar = full(it), dk = fz_smem_addr(sk);
            fz_mbar_expect(bar, 4 * TILE);
#pragma unroll
            for (int cb = 0; cb < DH / 64; cb++) {
              fz_tma2d(dk + cb * BC * 128, slot, 64 * cb, (int)rk, bar);
              fz_tma2d(dk + 2 * TILE + cb * BC * 128, slot, 64 * cb, (int)rv, bar);
            }
          }
          continue;
        }
        fz_att_wg_rows<DH, BC, 128>(sk, 0, BC, tid, [&](int r) { return k0 + r < hi ? c.row(0, b, g, k0 + r, npre) : (const u16*)nullptr; });
        fz_att_wg_rows<DH, BC, 128>(sk + TILE, 0, BC, tid, [&](int r) { return k0 + r < hi ? c.row(1, b, g, k0 + r, npre) : (const u16*)nullptr; });
        fz_cp_commit();
        if (pend >= 0) signal(false);
        pend = it;
      }
      if (pend >= 0) signal(true);
    }
    return;
  }
  fz_regs_inc<CREGS>();
  const int tid = threadIdx.x & 127, lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3, gr = lane >> 2, tq = lane & 3;
  const i64 S = c.nsq();
  u16* const sq = tiles();
  const u32 qa = fz_smem_addr(sq) + wg * 64 * 128, ra = fz_smem_addr(sq + BR * DH);
  u32 it = 0; // the ring's fills consumed so far
  // qload starts the copy of this warpgroup's query rows of the block's
  // tile wi (none past the sequence) and says whether it did: a persistent
  // block's next tile's once the last Q·Kᵀ of this one has read the rows,
  // beside its last P·V and under its output's stores; otherwise the
  // block's one tile's, first.
  const auto qload = [&](int wi) {
    i64 nb, nh, nq0;
    if (!fz_att_wg_item<BR>(c, wi, nb, nh, nq0) || nq0 + wg * 64 >= S) return false;
    fz_att_wg_rows<DH, BR, 128>(sq, wg * 64, 64, tid, [&](int r) { return nq0 + r < S ? c.qrow(nb, nh, nq0 + r) : (const u16*)nullptr; });
    fz_cp_commit();
    return true;
  };
  bool qpend = C::PERSIST && qload(0);
  fz_att_wg_tile w;
  for (int wi = 0; fz_att_wg_at<BR>(c, wi, w); wi++) {
    const i64 b = w.b, h = w.h, ntot = w.ntot, p0 = w.p0, q0 = w.q0, lo = w.lo, hi = w.hi;
    const int ntile = (int)((hi - lo + BC - 1) / BC);
    const i64 w0 = q0 + wg * 64, wl = fz_min64(w0 + 63, S - 1);
    if (!C::PERSIST) qpend = qload(wi);
    if (qpend) {
      fz_cp_wait<0>();
      fz_fence_proxy_async();
      fz_bar_sync(1 + wg, 128);
      qpend = false;
    }
    // The tiles this warpgroup's rows see: ta .. tb - 1.
    int ta = 0, tb = 0;
    if (w0 < S) {
      i64 wlo, whi;
      c.kbounds(p0 + w0, p0 + wl, ntot, wlo, whi);
      if (whi > wlo) {
        ta = (int)(fz_max64(wlo - lo, 0) / BC);
        tb = (int)fz_min64(ntile, (whi - lo + BC - 1) / BC);
      }
    }
    if (C::PERSIST && ta >= tb) qpend = qload(wi + 1);
    i64 pos[2];
    decltype(fz_att_brow(c, 0, 0, 0, false)) br[2];
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
      const i64 i = w0 + warp * 16 + gr + 8 * hh;
      pos[hh] = p0 + (i < S ? i : S - 1);
      br[hh] = fz_att_brow(c, b, h, i, i < S);
    }
    const auto take = [&](int t) { fz_mbar_wait(full(it + t), ((it + t) / NST) & 1u); };
    const auto give = [&](int t) {
      if (tid == 0) fz_mbar_arrive(empty(it + t));
    };
#pragma unroll 1
    for (int t = 0; t < ta; t++) { take(t); give(t); }
    float o[NO][4], m[2] = {-FZ_INF, -FZ_INF}, l[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < NO; i++) { o[i][0] = 0.f; o[i][1] = 0.f; o[i][2] = 0.f; o[i][3] = 0.f; }
    if (ta < tb) {
      float s[BC / 8][4];
      u32 p[BC / 16][4];
      const auto qk = [&](int t) {
        const u32 ka = ra + (u32)(((it + t) % NST) * 4 * TILE);
        fz_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < NKS; kk++) {
          const u64 da = fz_wg_desc(qa + (kk >> 2) * BR * 128 + (kk & 3) * 32, 16, 1024, 1);
          const u64 db = fz_wg_desc(ka + (kk >> 2) * BC * 128 + (kk & 3) * 32, 16, 1024, 1);
          if (kk == 0) fz_att_wg_ss<BC, BF, true>(&s[0][0], da, db);
          else fz_att_wg_ss<BC, BF, false>(&s[0][0], da, db);
        }
        fz_wgmma_commit();
      };
      const auto pv = [&](int t) {
        const u32 va = ra + (u32)(((it + t) % NST) * 4 * TILE) + 2 * TILE;
        fz_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BC / 16; kk++) fz_att_wg_rs<DH, BF>(&o[0][0], p[kk], fz_wg_desc(va + kk * 16 * 128, BC * 128, 1024, 1));
        fz_wgmma_commit();
      };
      // softmax turns tile t's scores into probabilities and says whether
      // the output is to be rescaled by alpha.
      const auto softmax = [&](int t, float (&alpha)[2]) {
        const i64 k0 = lo + (i64)t * BC;
        const bool mask = k0 + BC > hi || c.tile_masked(p0 + w0, p0 + wl, k0, k0 + BC);
        return fz_att_scores<BC>(c, s, m, l, alpha, pos, br, k0, hi, mask, tq, false);
      };
      float alpha[2];
      take(ta);
      qk(ta);
      fz_wgmma_wait<0>();
      softmax(ta, alpha);
      fz_att_probs<BC, BF>(s, p);
#pragma unroll 1
      for (int t = ta + 1; t < tb; t++) {
        take(t);
        qk(t);
        pv(t - 1);
        fz_wgmma_wait<1>();
        const bool up = softmax(t, alpha);
        fz_wgmma_wait<0>();
        give(t - 1);
        if (up) fz_att_rescale(o, alpha);
        fz_att_probs<BC, BF>(s, p);
      }
      pv(tb - 1);
      if (C::PERSIST) qpend = qload(wi + 1);
      fz_wgmma_wait<0>();
      give(tb - 1);
    }
#pragma unroll 1
    for (int t = tb; t < ntile; t++) { take(t); give(t); }
    it += (u32)ntile;
    fz_att_lsum(l);
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
      const i64 i = w0 + warp * 16 + gr + 8 * hh;
      if (i >= S) continue;
      const float inv = l[hh] > 0.f ? 1.f / l[hh] : 0.f;
#pragma unroll
      for (int n = 0; n < NO; n++) c.ost2(b, h, i, n * 8 + tq * 2, o[n][2 * hh] * inv, o[n][2 * hh + 1] * inv);
    }
  }
}
