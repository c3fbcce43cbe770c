/*
 * The wgmma GEMM's own device code (codegen/cuda/gemm_wgmma.go), on the
 * wgmma GEMV's stages (gemv_wgmma.cuh) and the tensor copy engine (tma.cuh):
 * its tile order, the launch's shared memory, the slots of its tensor
 * maps, and the sums of one work item (fz_gemm_wg_tile).
 *
 * A work item is WG_ROWS rows of the left operand by the GEMV's GV_TN
 * column slots, K streamed through a ring of WG_STAGES stages of WG_K
 * positions (WG_STAGE_BYTES bytes: the weight's WG_K rows of the tile's
 * columns, then the rows' positions). The tile function reads the
 * kernel's context C (@BODY@_ctx: gemv.cuh, gemv_mma.cuh) and its
 * WG_ constants, WG_RES_STRIDE the f32 row stride of the tile's sums in
 * shared memory, and, where the copy engine may fill the stages, bcols()
 * (the weight's columns).
 *
 * Thread tid copies 8-slot group wc = tid % 32 of weight rows tid / 32 +
 * 8i of a stage (a warp, one row's 512 bytes), and chunks xc + 4j of two
 * rows of the left operand (a warp, 64 bytes of each of eight rows at a
 * time): each warp writes whole shared-memory lines. Where the launch
 * passes fz_gemm_wg_tile's checks, thread 0 fills the stages through the
 * tensor copy engine instead (fz_wg_ring_tma): the weight's map, K rows of
 * its N columns, in boxes of 64 columns by WG_K rows landing 128-byte
 * swizzled, as the copies lay them; the left operand's, its rows of kv
 * positions, in one box of a stage's WG_K positions by WG_ROWS rows,
 * row n at n * 2 WG_K bytes, 128-byte swizzled (16-byte chunk c at chunk
 * c ^ (n % 8)), so that every row is read from L2 as whole 32-byte
 * sectors. Positions past kv, rows past the operand and columns past N
 * land as zeros; a 64-slot group whose first column is past N (scol -1)
 * is asked for at column N.
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */
// The wgmma GEMM runs the GEMV's stage loop at plan.GemmWGRows rows
// (m64n128k16) and visits its tiles in groups of FZ_GEMM_WG_GROUP row
// blocks: within a group the row block changes fastest, so that the tiles
// in flight on the GPU at once share a few weight column tiles and row
// blocks in L2 instead of streaming every column tile of the weight for
// each row block.
#define FZ_GEMM_WG_GROUP 16
// fz_gemm_wg_item splits work item it of a unit's nrb row blocks by ntile
// column tiles into its row block and column tile, grouped as above.
FZ_DEV void fz_gemm_wg_item(i64 it, i64 nrb, i64 ntile, i64* rb, i64* t) {
  const i64 per = (i64)FZ_GEMM_WG_GROUP * ntile, g = it / per, j = it % per;
  const i64 first = g * FZ_GEMM_WG_GROUP, rows = nrb - first < FZ_GEMM_WG_GROUP ? nrb - first : FZ_GEMM_WG_GROUP;
  *rb = first + j % rows;
  *t = j / rows;
}
// fz_dyn_smem is the block's dynamic shared memory in bytes, as launched.
FZ_DEV u32 fz_dyn_smem() { u32 n; asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n)); return n; }
// The GEMM's tensor maps: two a SM (the weight's and the left operand's).
// A launch's block takes the most of an SM's shared memory, so the blocks
// that share an SM's slots run one after the other, and each builds its
// maps before its first copy.
static __device__ __align__(128) u64 fz_gemm_tmaps[2 * FZ_TMA_SLOTS * 16];
// fz_gemm_tslot is map i's slot of the calling thread's SM, or null.
FZ_DEV u64* fz_gemm_tslot(int i) {
  const u32 smid = fz_smid();
  return smid < FZ_TMA_SLOTS ? fz_gemm_tmaps + (2 * smid + i) * 16 : (u64*)0;
}
// A launch that splits K over the blocks of a cluster (plan.GemmWGSplits)
// reads its place in the cluster and meets the cluster's other blocks at
// its barriers: arrive releases this thread's shared-memory writes and
// reads, wait acquires every arrived thread's.
FZ_DEV u32 fz_cluster_rank() { u32 r; asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
FZ_DEV u32 fz_cluster_blocks() { u32 n; asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n)); return n; }
FZ_DEV void fz_cluster_arrive() { asm volatile("barrier.cluster.arrive.release;" ::: "memory"); }
FZ_DEV void fz_cluster_wait() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }
// A split launch walks work indices (emitGemmWGSplitLoop): block x takes
// x, x + blocks, ...; fz_gemm_wg_full is how many items run unsplit, a
// block each, before the rest split over clusters of s blocks (all of
// them in a launch whose clusters are not of s blocks; none where every
// item splits; where only the last round splits (tail), the whole rounds
// of blocks, if the items left are no more than the clusters, else all),
// and fz_gemm_wg_work is index wi's item and its split count. Their Go
// twins are plan.GemmWGFull and plan.GemmWGWork.
FZ_DEV i64 fz_gemm_wg_full(i64 nit, i64 blocks, int s, bool tail) {
  if (fz_cluster_blocks() != (u32)s) return nit;
  if (!tail) return 0;
  const i64 last = nit / blocks * blocks;
  return (nit - last) * s > blocks ? nit : last;
}
FZ_DEV i64 fz_gemm_wg_work(i64 wi, i64 full, int s, int* S) {
  *S = wi < full ? 1 : s;
  return wi < full ? wi : full + (wi - full) / s;
}
// fz_gemm_wg_reduce makes rows [m0, m1) of this block's tile sums res
// (stride floats a row, SLOTS slots) the sums over the cluster's first
// splits blocks' res, added in rank order (the same bits whichever block
// adds them); 16 bytes a thread at a time, through distributed shared
// memory. The cluster's sums must be complete (a cluster barrier), and no
// other block may read these rows.
template <int SLOTS>
FZ_DEV void fz_gemm_wg_reduce(float* res, int stride, int splits, int m0, int m1) {
  const u32 base = fz_smem_addr(res);
  for (int e = threadIdx.x; e < (m1 - m0) * (SLOTS / 4); e += blockDim.x) {
    const int m = m0 + e / (SLOTS / 4), c = (e % (SLOTS / 4)) * 4;
    const u32 off = base + 4u * (u32)(m * stride + c);
    float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
    for (int q = 0; q < splits; q++) {
      u32 ra;
      float v0, v1, v2, v3;
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(off), "r"(q));
      asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v0), "=f"(v1), "=f"(v2), "=f"(v3) : "r"(ra) : "memory");
      s0 += v0; s1 += v1; s2 += v2; s3 += v3;
    }
    *(float4*)(res + m * stride + c) = float4{s0, s1, s2, s3};
  }
}

// fz_wg_ring_tma runs the stage loop of the wgmma GEMM whose stages thread
// 0 fills through the tensor copy engine: issueT(st, offset, barrier)
// copies stage st (of count) to that ring offset, completing on the
// stage's mbarrier (shared address tb, 8 bytes a stage, parities in ph),
// the rows read through descriptor db. STAGES - 1 stages are in flight
// ahead of the one multiplied: a step issues its stage's wgmmas, retires
// the previous stage's (wgmma wait), and only then meets the block
// barrier that lets thread 0 refill that stage, so that the tensor cores
// hold a stage of work while the warps wait there. Thread 0 fences the
// proxies before the first copies, since the ring last held the previous
// item's sums.
template <int NB, bool BF16, int STAGES, int SB, int ROWS, int BSTEP, class I, class Issue>
FZ_DEV void fz_wg_ring_tma(float (*acc)[NB * 4], const I count, const u64 da, const u64 db, const u32 tb, u32& ph, Issue&& issueT) {
  constexpr int AHEAD = STAGES - 1, LAST = (STAGES - 1) * SB;
  if (threadIdx.x == 0) {
    fz_fence_proxy_async();
    for (int s = 0; s < AHEAD; s++) if (s < count) issueT(s, s * SB, tb + 8 * s);
  }
  u32 rso = 0, wso = AHEAD * SB, rsl = 0, wsl = AHEAD;
  for (I st = 0; st < count; st++) {
    fz_mbar_wait(tb + 8 * rsl, (ph >> rsl) & 1u);
    ph ^= 1u << rsl;
    fz_gemv_wg_stage<NB, BF16>(acc, da + (rso >> 4), db + (rso >> 4), ROWS, BSTEP);
    fz_wgmma_wait<1>();
    __syncthreads();
    if (threadIdx.x == 0 && st + AHEAD < count) issueT(st + AHEAD, wso, tb + 8 * wsl);
    rso = rso == LAST ? 0 : rso + SB;
    wso = wso == LAST ? 0 : wso + SB;
    rsl = rsl == STAGES - 1 ? 0 : rsl + 1;
    wsl = wsl == STAGES - 1 ? 0 : wsl + 1;
  }
  fz_wgmma_wait<0>();
}

// fz_gemm_wg_tma is a block's copy-engine state across its items: the
// shared memory its maps are built in, its stage mbarriers' shared address
// and parities, whether the launch takes the engine (on), and whether
// that was decided yet.
struct fz_gemm_wg_tma {
  u64* maps;
  u32 tb, ph;
  bool on, decided;
};

// fz_gemm_wg_tma_init declares the engine's shared memory and initialises
// the stage mbarriers (thread 0; the item loop's first barrier publishes
// them): a block whose kernel may take the engine (TMA) calls it once,
// before its items.
template <int STAGES>
FZ_DEV fz_gemm_wg_tma fz_gemm_wg_tma_init() {
  __shared__ __align__(128) u64 tms[2][16];
  __shared__ __align__(8) u64 tbar[STAGES];
  const u32 tb = fz_smem_addr(tbar);
  if (threadIdx.x == 0) for (int i = 0; i < STAGES; i++) fz_mbar_init(tb + 8 * i, 1);
  return fz_gemm_wg_tma{&tms[0][0], tb, 0u, false, false};
}

// fz_gemm_wg_tile leaves in res (WG_RES_STRIDE floats a row) the sums of
// one work item: rows r0 .. r0+WG_ROWS-1 of unit ub (rows of the left
// operand in all; sArow[i] the address of row r0 + i, null past the
// item's rows) against the tile's columns scol (-1 for none), over count
// stages of K from stage ks0 (kv positions in all); the weight rows past
// kv and the left operand's positions past kv and rows past the item's
// are zero fills. TMA: the launch may take the copy engine, decided at
// the block's first item (tm): its SM has map slots, the weight's start
// and row stride and the left operand's first row and row stride are
// 16-byte multiples, the sizes fit the maps' 32-bit coordinates, and
// every row r of the left operand lies at row 0 plus r row strides (a view
// that permutes rows fails it and keeps the cp.async copies).
template <class C, bool TMA>
FZ_DEV void fz_gemm_wg_tile(const C& c, fz_gemm_wg_tma& tm, const i64 ub, const i64 r0, const i64 rows, const i64 kv, const i64 ks0, const i64 count, const i64* scol, const u16* const* sArow, unsigned char* ring, float* res) {
  constexpr int K = C::WG_K, SB = C::WG_STAGE_BYTES, NB = C::WG_ROWS / 8, WB = K * C::GV_TN * 2, PER = K / 32;
  const int tid = threadIdx.x, wg = tid >> 7, wc = tid & 31, xr = (tid >> 2) & 7, xc = tid & 3;
  const u32 rb = fz_smem_addr(ring);
  const u64 da = fz_wg_desc(rb + wg * 2 * K * 128, 16, 1024, 1), db = fz_wg_desc(rb + WB, 128, K * 16, 0);
  const i64 col = scol[wc * 8], cl = col >= 0 ? col : 0;
  const u16* xa[2] = {sArow[8 * (tid >> 5) + xr], sArow[8 * ((tid >> 5) + 8) + xr]};
  const u16* x0 = sArow[0];
  i64 wrs = 0;
  const u16* wp;
  if constexpr (C::BSIMPLE) {
    wrs = c.bks();
    wp = c.b(ub, tid >> 5, cl);
  } else {
    wp = c.b(ub, 0, cl);
  }
  auto issue = [&](i64 st, u32 so) {
    const i64 kb = (ks0 + st) * K;
    const bool whole = kb + K <= kv;
#pragma unroll
    for (int i = 0; i < K / 8; i++) {
      const int r = (tid >> 5) + 8 * i;
      const bool ok = col >= 0 && (whole || kb + r < kv);
      const u16* src;
      if constexpr (C::BSIMPLE) src = ok ? wp + (kb + 8 * i) * wrs : wp;
      else src = ok ? c.b(ub, kb + r, cl) : wp;
      fz_cp16s(rb + so + fz_gemv_wg_woff(r, wc, K), src, ok ? 16 : 0);
    }
    // Copy i of a thread's 2 PER is chunk xc + 4 (i % PER) of row
    // 8 (tid / 32 + 8 (i / PER)) + xr.
#pragma unroll
    for (int i = 0; i < 2 * PER; i++) {
      const int n = 8 * ((tid >> 5) + 8 * (i / PER)) + xr, ch = xc + 4 * (i % PER);
      const u16* a = xa[i / PER];
      const i64 kx = kb + ch * 8;
      const int bytes = a ? (int)fz_max64(0, fz_min64(16, 2 * (kv - kx))) : 0;
      fz_cp16s(rb + so + fz_gemv_wg_xoff(n, ch, K, WB), bytes ? a + kx : x0, bytes);
    }
  };
  float acc[2][NB * 4];
#pragma unroll
  for (int i = 0; i < NB * 8; i++) (&acc[0][0])[i] = 0.f;
  if constexpr (TMA) {
    const i64 nw = c.bcols();
    if (!tm.decided) {
      tm.decided = true;
      const u16* wbase = c.b(ub, 0, 0);
      const u16* a0 = c.a(ub, 0, 0);
      const i64 lda = c.a(ub, 1, 0) - a0, lim = 0x7fffffff;
      bool ok = fz_gemm_tslot(0) != 0 && fz_aligned(wbase, 16) && fz_aligned(a0, 16) && wrs > 0 && wrs % 8 == 0 && lda > 0 && lda % 8 == 0;
      ok = ok && kv <= lim && nw <= lim && rows <= lim;
      for (i64 i = tid; ok && i < rows; i += blockDim.x) ok = c.a(ub, i, 0) == a0 + i * lda;
      tm.on = __syncthreads_and(ok);
      if (tm.on && tid < 32) {
        fz_tmap2d_build<3>(tm.maps, fz_gemm_tslot(0), wbase, (u32)nw, (u32)kv, (u64)(wrs * 2), 64, K);
        fz_tmap2d_build<3>(tm.maps + 16, fz_gemm_tslot(1), a0, (u32)kv, (u32)rows, (u64)(lda * 2), K, C::WG_ROWS);
        if (tid == 0) {
          fz_tmap_acquire(fz_gemm_tslot(0));
          fz_tmap_acquire(fz_gemm_tslot(1));
        }
      }
    }
    if (tm.on) {
      constexpr int G = C::GV_TN / 64;
      int gx[G];
      for (int i = 0; i < G; i++) gx[i] = scol[64 * i] >= 0 ? (int)scol[64 * i] : (int)nw;
      const u64* wm = fz_gemm_tslot(0);
      const u64* am = fz_gemm_tslot(1);
      auto issueT = [&](i64 st, u32 so, u32 bar) {
        const int kb = (int)((ks0 + st) * K);
        fz_mbar_expect(bar, SB);
        for (int i = 0; i < G; i++) fz_tma2d(rb + so + i * K * 128, wm, gx[i], kb, bar);
        fz_tma2d(rb + so + WB, am, kb, (int)r0, bar);
      };
      // The copy engine lays a row's positions at 2 K bytes, 8 rows (1024
      // bytes at K = 64) the swizzle's atom; a k16 slice steps 32 bytes.
      const u64 dbt = fz_wg_desc(rb + WB, 16, 8 * 2 * K, 1);
      fz_wg_ring_tma<NB, C::BF16, C::WG_STAGES, SB, K, 32 / 16>(acc, count, da, dbt, tm.tb, tm.ph, issueT);
    } else {
      fz_wg_ring_copy<NB, C::BF16, C::WG_STAGES, SB, K, 2 * 128 / 16>(acc, count, da, db, issue);
    }
  } else {
    fz_wg_ring_copy<NB, C::BF16, C::WG_STAGES, SB, K, 2 * 128 / 16>(acc, count, da, db, issue);
  }
  __syncthreads();
  fz_gemv_wg_store<NB>(acc, res, C::WG_RES_STRIDE, wg);
}
