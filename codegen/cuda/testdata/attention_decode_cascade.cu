// ---- attention: the prefix pass of cascade decode attention
// (codegen/cuda/attention_cascade_lib.go) ----

// fz_att_psplit is the prefix pass's split of a cascade's npre shared keys:
// CHUNK keys a split in deterministic mode (CHUNK > 0); otherwise the keys
// divided over NPS splits (the launch plan's count, plan.PrefixSplits, which
// fills the SMs at the planned dims), at least PMIN keys a split, rounded
// up to 16. At most slots - 1 splits, so that a slot stays for the own
// keys; 0, the decode kernel then attending the prefix itself, with no
// prefix keys or fewer than 2 slots. The split size goes to chunk. The
// context's pslots calls it with the kernel's constants.
template <int CHUNK, int NPS, int PMIN>
FZ_DEV i64 fz_att_psplit(i64 npre, i64 slots, i64& chunk) {
  if (npre <= 0 || slots < 2) return 0;
  chunk = CHUNK > 0 ? (i64)CHUNK : fz_max64(((npre + NPS - 1) / NPS + 15) / 16 * 16, PMIN);
  i64 n = (npre + chunk - 1) / chunk;
  if (n > slots - 1) {
    chunk = ((npre + slots - 2) / (slots - 1) + 15) / 16 * 16;
    n = (npre + chunk - 1) / chunk;
  }
  return n;
}

// fz_att_prefix is the prefix pass. For kv head g, query row x = b * R + r
// of the whole batch (R = GRP × S rows a sequence: head g * GRP + r / S,
// query i = r % S at position ntot(b) - S + i) is row x % BR of row block
// x / BR, BR = 16 × the warps: each warp owns 16 rows, and the block's rows
// share every key tile. A work item is (kv head, prefix split, row block),
// strided over the blocks of the grid with the row blocks of one split
// next to each other, so that blocks running together read the same tiles
// (through L2). An item streams the tiles of BC keys of its split that some
// row of the block can see (the mask's bounds over the block's positions)
// through a ring of NST stages shared by the block (cp.async, one barrier a
// tile); a warp computes only the tiles its rows see, masking element by
// element where some of them do not (positions differ between sequences of
// ragged lengths; a window can hide prefix keys). Tiles start at fixed
// offsets of the split, and a tile a row does not see leaves its state as
// it was, so each row's result depends neither on the batch nor on the
// other rows of its block. Each row writes its partial (m, l and the
// unnormalised o, as fz_att_decode's) to slot = split of its sequence and
// kv head.
//
// The shared memory is the decode launch's (plan.DecodeRing: NSTG stages
// of NT / 32 warps × 16 K and V rows, then 16 query rows): the block's BR
// query rows, then the ring, of up to 4 stages. A tile is BC = 64 keys
// where three stages of them fit, else 32, and 16 past a head dim of 128
// (a warp's scores of a tile and its output rows live in registers).
template <int DH, int DP, int NT, int NSTG, bool BF, class C>
FZ_DEV void fz_att_prefix(const C& c, float* ws, i64 cap) {
  constexpr int NW = NT / 32, NN = DP / 8, NPAIR = DP / 16, LDS = DP + 8, BR = 16 * NW;
  constexpr int FREE = 16 * LDS * (2 * NW * NSTG + 1 - NW);
  constexpr int BC = DP > 128 ? 16 : FREE / (2 * 64 * LDS) >= 3 ? 64 : FREE / (2 * 32 * LDS) >= 2 ? 32 : 16;
  constexpr int NST = FREE / (2 * BC * LDS) < 4 ? FREE / (2 * BC * LDS) : 4, KST = 2 * BC * LDS;
  static_assert(NST >= 2, "the prefix pass needs two stages");
  constexpr i64 FAR = (i64)1 << 62;
  extern __shared__ __align__(16) u16 fz_att_dsm[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gr = lane >> 2, tq = lane & 3;
  u16* const sq = fz_att_dsm;
  u16* const ring = fz_att_dsm + BR * LDS;
  const i64 B = c.nb(), G = c.ng(), S = c.nsq(), R = (i64)C::GRP * S, NR = B * R;
  if (NR == 0) return;
  const i64 nrt = (R + 15) / 16, ncnt = (B * G * nrt + 3) / 4 * 4, per = B * G * R * (DH + 2);
  const i64 slots = cap > ncnt && per > 0 ? (cap - ncnt) / per : 0;
  float* const part = ws + ncnt;
  const i64 nrb = (NR + BR - 1) / BR, nblk = (i64)gridDim.x * gridDim.y * gridDim.z;
  const i64 blk = blockIdx.x + (i64)gridDim.x * (blockIdx.y + (i64)gridDim.y * blockIdx.z);
  i64 base = 0; // the items of the kv heads before g
  for (i64 g = 0; g < G; g++) {
    const i64 npre = c.npre(0, g);
    i64 chunk = 0;
    const i64 nit = c.pslots(npre, slots, chunk) * nrb;
    for (i64 it = base + (blk - base % nblk + nblk) % nblk; it < base + nit; it += nblk) {
      const i64 sp = (it - base) / nrb, x0 = (it - base - sp * nrb) * BR;
      const i64 j0 = sp * chunk, j1 = fz_min64(npre, j0 + chunk);
      // The positions of the thread's two rows and their range over the
      // warp's rows (pmin, pmax) and over the block's (bmin, bmax: each
      // warp takes them all, a row a lane at a time).
      i64 pos[2], pmin = FAR, pmax = -FAR, bmin = FAR, bmax = -FAR;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const i64 x = x0 + warp * 16 + gr + 8 * h, xx = x < NR ? x : NR - 1, b = xx / R, r = xx - b * R;
        pos[h] = npre + c.nown(b, g) - S + r % S;
        if (x < NR) { pmin = fz_min64(pmin, pos[h]); pmax = fz_max64(pmax, pos[h]); }
      }
      for (int r = lane; r < BR; r += 32) {
        const i64 x = x0 + r;
        if (x >= NR) break;
        const i64 b = x / R, p = npre + c.nown(b, g) - S + (x - b * R) % S;
        bmin = fz_min64(bmin, p);
        bmax = fz_max64(bmax, p);
      }
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        if (o >= 4) {
          pmin = fz_min64(pmin, __shfl_xor_sync(0xffffffffu, pmin, o));
          pmax = fz_max64(pmax, __shfl_xor_sync(0xffffffffu, pmax, o));
        }
        bmin = fz_min64(bmin, __shfl_xor_sync(0xffffffffu, bmin, o));
        bmax = fz_max64(bmax, __shfl_xor_sync(0xffffffffu, bmax, o));
      }
      // The block's tiles [t0, t0 + nt) of the split, and the keys the
      // warp's rows see.
      i64 lo, hi, wlo = 0, whi = 0;
      c.kbounds(bmin, bmax, npre, lo, hi);
      lo = fz_max64(lo, j0);
      hi = fz_min64(hi, j1);
      if (pmin <= pmax) c.kbounds(pmin, pmax, npre, wlo, whi);
      const i64 t0 = lo < hi ? (lo - j0) / BC : 0;
      const int nt = lo < hi ? (int)((hi - j0 + BC - 1) / BC - t0) : 0;
      float o[NN][4], m[2] = {-FZ_INF, -FZ_INF}, l[2] = {0.f, 0.f};
      // A cascade has no score bias (the attention pass takes none over a
      // shared prefix).
      const fz_att_nobias nob[2] = {};
#pragma unroll
      for (int i = 0; i < NN; i++) { o[i][0] = 0.f; o[i][1] = 0.f; o[i][2] = 0.f; o[i][3] = 0.f; }
      __syncthreads(); // the last item's readers of the shared memory are done
      // The first tiles in flight, then the block's query rows to shared
      // memory, a row a warp at a time (zeros past the batch's rows and
      // past DH; the loop's first barrier publishes them).
#pragma unroll
      for (int i = 0; i < NST - 1; i++) {
        if (i < nt) {
          const i64 k0 = j0 + (t0 + i) * BC;
          fz_att_tile<DH, DP, BC, NT>(c, ring + i * KST, 0, 0, g, npre, k0, j1);
          fz_att_tile<DH, DP, BC, NT>(c, ring + i * KST + BC * LDS, 1, 0, g, npre, k0, j1);
        }
        fz_cp_commit();
      }
      for (int r = warp; r < BR; r += NW) {
        const i64 x = x0 + r;
        const u16* qp = (const u16*)0;
        if (x < NR) {
          const i64 b = x / R, rr = x - b * R;
          qp = c.qrow(b, g * C::GRP + rr / S, rr % S);
        }
        for (int d = 2 * lane; d < DP; d += 64) *(u32*)(sq + r * LDS + d) = fz_att_ld2<DH>(qp, d);
      }
      int cur = 0, nxt = NST - 1;
      for (int i = 0; i < nt; i++) {
        fz_cp_wait<NST - 2>();
        __syncthreads(); // tile i is in; every warp is done with tile i - 1
        if (i + NST - 1 < nt) {
          const i64 k0 = j0 + (t0 + i + NST - 1) * BC;
          fz_att_tile<DH, DP, BC, NT>(c, ring + nxt * KST, 0, 0, g, npre, k0, j1);
          fz_att_tile<DH, DP, BC, NT>(c, ring + nxt * KST + BC * LDS, 1, 0, g, npre, k0, j1);
        }
        fz_cp_commit();
        const i64 k0 = j0 + (t0 + i) * BC;
        if (k0 < whi && k0 + BC > wlo) {
          const u16* sk = ring + cur * KST;
          float s[BC / 8][4];
          u32 p[BC / 16][4];
          fz_att_qks<DP, BC, BF>(s, sq + warp * 16 * LDS, sk, lane);
          const bool mask = k0 + BC > j1 || c.tile_masked(pmin, pmax, k0, k0 + BC);
          fz_att_online<BC, NN, BF>(c, s, m, l, o, p, pos, nob, k0, j1, mask, tq);
          fz_att_pv<DP, BC, NPAIR, BF>(o, p, sk + BC * LDS, lane, 0, 1);
        }
        cur = cur + 1 == NST ? 0 : cur + 1;
        nxt = nxt + 1 == NST ? 0 : nxt + 1;
      }
      fz_cp_wait<0>();
      fz_att_lsum(l);
      // The rows' partials, to slot sp of their (sequence, kv head).
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const i64 x = x0 + warp * 16 + gr + 8 * h;
        if (x >= NR) continue;
        const i64 b = x / R, r = x - b * R;
        float* const pp = part + (((b * G + g) * slots + sp) * R + r) * (DH + 2);
        if (tq == 0) { pp[0] = m[h]; pp[1] = l[h]; }
#pragma unroll
        for (int n = 0; n < NN; n++) {
          const int d = n * 8 + tq * 2;
          if (d < DH) pp[2 + d] = o[n][2 * h];
          if (d + 1 < DH) pp[3 + d] = o[n][2 * h + 1];
        }
      }
    }
    base += nit;
  }
}

// Scratch of split-KV partials, sized for the plan's launch.
static __device__ float fz_workspace[1331712];

// body of k02_attention_attention
struct fzb_45a69701b08c4b7c_ctx {
  const u16* p0;
  const u16* p1;
  const u16* p2;
  u16* p3;
  i64 dim_B;
  i64 dim_S;
  i64 dim_T;
  i64 dim_L;
  const fz_tmap* p8;
  static constexpr int GRP = 4;
  // Whether a prefix pass attends the prefix the batch shares (fz_att_prefix).
  static constexpr bool PREFIX = true;
  // Its split count and size (fz_att_psplit) with slots of workspace.
  __device__ __forceinline__ i64 pslots(i64 npre, i64 slots, i64& chunk) const { return fz_att_psplit<0, 4, 256>(npre, slots, chunk); }
  // Batch, query heads, kv heads, queries per sequence.
  __device__ __forceinline__ i64 nb() const { return dim_B; }
  __device__ __forceinline__ i64 nh() const { return 32; }
  __device__ __forceinline__ i64 ng() const { return 8; }
  __device__ __forceinline__ i64 nsq() const { return dim_S; }
  // Keys of sequence b: the shared prefix's, then its own.
  __device__ __forceinline__ i64 npre(i64 b, i64 g) const { return dim_L; }
  __device__ __forceinline__ i64 nown(i64 b, i64 g) const { return (dim_S + dim_T); }
  // Row of key j (prefix keys first) of K (c = 0) or V (c = 1); rkeyp is
  // the address of the word it reads (a page-table entry; null for
  // unpaged keys), rrow the row from that word.
  static constexpr bool KEYS = false;
  static constexpr bool AHEAD = true;
  __device__ __forceinline__ const u16* row(int c, i64 b, i64 g, i64 j, i64 npre) const {
    const int* e = rkeyp(b, g, j, npre);
    return rrow(e ? *e : 0, c, b, g, j, npre);
  }
  __device__ __forceinline__ const int* rkeyp(i64 b, i64 g, i64 j, i64 npre) const { return nullptr; }
  __device__ __forceinline__ const u16* rrow(int key, int c, i64 b, i64 g, i64 j, i64 npre) const {
    if (j < npre) {
      return c == 0 ? (const u16*)(p1 + ((g*(128*dim_L)) + (j*128))) : (const u16*)(p1 + (((1024*dim_L) + (g*(128*dim_L))) + (j*128)));
    }
    j -= npre;
    return c == 0 ? (const u16*)(p2 + (((b*(1024*dim_S + 1024*dim_T)) + (g*(128*dim_S + 128*dim_T))) + (j*128))) : (const u16*)(p2 + ((((1024*dim_B*dim_S + 1024*dim_B*dim_T) + (b*(1024*dim_S + 1024*dim_T))) + (g*(128*dim_S + 128*dim_T))) + (j*128)));
  }
  // Whether K is stored transposed, a key a column of its buffer (its row
  // the address of its dim 0; dim d kdo(d) further).
  static constexpr bool KEYST = false;
  // Whether every key's K and V rows lie DH elements after the key before's
  // (one source, unpaged): the wgmma prefill's tensor maps.
  static constexpr bool KSEQ = false;
  // The base of the tensor maps: the lower of the own keys' and values' buffers.
  __device__ __forceinline__ const u16* tbase() const { return (const u16*)p2; }
  // The host-encoded tensor map of the rows from tbase() (codegen.RowMap), or null.
  __device__ __forceinline__ const fz_tmap* tmap() const { return p8; }
  // Query i of head h, and the output stores.
  __device__ __forceinline__ const u16* qrow(i64 b, i64 h, i64 i) const { return (const u16*)(p0 + (((b*(4096*dim_S)) + (h*128)) + (i*4096))); }
  __device__ __forceinline__ void ost(i64 b, i64 h, i64 i, int d, float v) const { fz_st_bf16(p3 + ((((b*(4096*dim_S)) + (h*128)) + (i*4096)) + d), v); }
  __device__ __forceinline__ void ost2(i64 b, i64 h, i64 i, int d, float v0, float v1) const {
    u16* p = p3 + ((((b*(4096*dim_S)) + (h*128)) + (i*4096)) + d);
    if (d + 1 < 128 && fz_aligned(p, 4)) { *(u32*)p = fz_pack_bf16(v0, v1); return; }
    ost(b, h, i, d, v0);
    if (d + 1 < 128) ost(b, h, i, d + 1, v1);
  }
  // Score modifier: softcap(score * scale), in log2 units.
  __device__ __forceinline__ float smod(float s) const { return s * 0.127517432f; }
  // Whether the mask has a window (the wgmma prefill sizes its warpgroups'
  // registers by it).
  static constexpr bool WINDOW = false;
  // Mask: whether a query sees a key delta positions before it (after it
  // when negative); distances are clamped to +-2^30.
  __device__ __forceinline__ bool visible(int delta) const { return delta >= 0; }
  // The keys [lo, hi) queries at positions pmin..pmax can see among n.
  __device__ __forceinline__ void kbounds(i64 pmin, i64 pmax, i64 n, i64& lo, i64& hi) const {
    lo = 0; hi = n;
    hi = fz_min64(hi, pmax + 1);
    if (hi < lo) hi = lo;
  }
  // Whether some query at pmin..pmax does not see some key of [k0, k1).
  __device__ __forceinline__ bool tile_masked(i64 pmin, i64 pmax, i64 k0, i64 k1) const { return k1 - 1 > pmin; }
  // Score bias: added to the scaled score before softcap (smodb).
  static constexpr bool BIAS = false;
};
FZ_DEV void fzb_45a69701b08c4b7c_prefix(const u16* __restrict__ p0, const u16* __restrict__ p1, const u16* __restrict__ p2, u16* __restrict__ p3, i64 dim_B, i64 dim_S, i64 dim_T, i64 dim_L, const fz_tmap* __restrict__ p8) {
  const fzb_45a69701b08c4b7c_ctx c = {p0, p1, p2, p3, dim_B, dim_S, dim_T, dim_L, p8};
  fz_grid_sync();
  fz_att_prefix<128, 128, 128, 3, true>(c, fz_workspace, (i64)(sizeof(fz_workspace) / sizeof(float)));
}
FZ_DEV void fzb_45a69701b08c4b7c(const u16* __restrict__ p0, const u16* __restrict__ p1, const u16* __restrict__ p2, u16* __restrict__ p3, i64 dim_B, i64 dim_S, i64 dim_T, i64 dim_L, const fz_tmap* __restrict__ p8) {
  const fzb_45a69701b08c4b7c_ctx c = {p0, p1, p2, p3, dim_B, dim_S, dim_T, dim_L, p8};
  fz_att_decode<128, 128, 128, 3, 0, true>(c, fz_workspace, (i64)(sizeof(fz_workspace) / sizeof(float)));
}
FZ_DEV void fzb_45a69701b08c4b7c_prefill(const u16* __restrict__ p0, const u16* __restrict__ p1, const u16* __restrict__ p2, u16* __restrict__ p3, i64 dim_B, i64 dim_S, i64 dim_T, i64 dim_L, const fz_tmap* __restrict__ p8) {
  const fzb_45a69701b08c4b7c_ctx c = {p0, p1, p2, p3, dim_B, dim_S, dim_T, dim_L, p8};
  fz_grid_sync();
  fz_att_prefill<128, 128, 64, 128, 1, true>(c);
}

// entries
extern "C" __global__ void __launch_bounds__(128, 1) k02_attention_attention_prefix(const u16* __restrict__ v23, const u16* __restrict__ v9_prefix, const u16* __restrict__ v10_kv, u16* __restrict__ v65_a, i64 dim_B, i64 dim_S, i64 dim_T, i64 dim_L, const __grid_constant__ fz_tmap tmap8) { fzb_45a69701b08c4b7c_prefix(v23, v9_prefix, v10_kv, v65_a, dim_B, dim_S, dim_T, dim_L, &tmap8); }
extern "C" __global__ void __launch_bounds__(128, 1) k02_attention_attention(const u16* __restrict__ v23, const u16* __restrict__ v9_prefix, const u16* __restrict__ v10_kv, u16* __restrict__ v65_a, i64 dim_B, i64 dim_S, i64 dim_T, i64 dim_L, const __grid_constant__ fz_tmap tmap8) { fzb_45a69701b08c4b7c(v23, v9_prefix, v10_kv, v65_a, dim_B, dim_S, dim_T, dim_L, &tmap8); }
extern "C" __global__ void __launch_bounds__(128, 1) k02_attention_attention_prefill(const u16* __restrict__ v23, const u16* __restrict__ v9_prefix, const u16* __restrict__ v10_kv, u16* __restrict__ v65_a, i64 dim_B, i64 dim_S, i64 dim_T, i64 dim_L, const __grid_constant__ fz_tmap tmap8) { fzb_45a69701b08c4b7c_prefill(v23, v9_prefix, v10_kv, v65_a, dim_B, dim_S, dim_T, dim_L, &tmap8); }
