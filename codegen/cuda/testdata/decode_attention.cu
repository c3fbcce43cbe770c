// body of k02_attention_attention
struct fzb_bcaceac5e94fc4f2_ctx {
  const u16* p0;
  const u16* p1;
  u16* p2;
  i64 dim_B;
  i64 dim_S;
  i64 dim_T;
  static constexpr int GRP = 4;
  // Batch, query heads, kv heads, queries per sequence.
  __device__ __forceinline__ i64 nb() const { return dim_B; }
  __device__ __forceinline__ i64 nh() const { return 32; }
  __device__ __forceinline__ i64 ng() const { return 8; }
  __device__ __forceinline__ i64 nsq() const { return dim_S; }
  // Keys of sequence b: the shared prefix's, then its own.
  __device__ __forceinline__ i64 npre(i64 b, i64 g) const { return 0; }
  __device__ __forceinline__ i64 nown(i64 b, i64 g) const { return (dim_S + dim_T); }
  // Row of key j (prefix keys first) of K (c = 0) or V (c = 1).
  __device__ __forceinline__ const u16* row(int c, i64 b, i64 g, i64 j, i64 npre) const {
    return c == 0 ? (const u16*)(p1 + (((b*(1024*dim_S + 1024*dim_T)) + (g*(128*dim_S + 128*dim_T))) + (j*128))) : (const u16*)(p1 + ((((1024*dim_B*dim_S + 1024*dim_B*dim_T) + (b*(1024*dim_S + 1024*dim_T))) + (g*(128*dim_S + 128*dim_T))) + (j*128)));
  }
  // Query i of head h, and the output stores.
  __device__ __forceinline__ const u16* qrow(i64 b, i64 h, i64 i) const { return (const u16*)(p0 + (((b*(4096*dim_S)) + (h*128)) + (i*4096))); }
  __device__ __forceinline__ void ost(i64 b, i64 h, i64 i, int d, float v) const { fz_st_bf16(p2 + ((((b*(4096*dim_S)) + (h*(128*dim_S))) + (i*128)) + d), v); }
  __device__ __forceinline__ void ost2(i64 b, i64 h, i64 i, int d, float v0, float v1) const {
    u16* p = p2 + ((((b*(4096*dim_S)) + (h*(128*dim_S))) + (i*128)) + d);
    if (d + 1 < 128 && fz_aligned(p, 4)) { *(u32*)p = fz_pack_bf16(v0, v1); return; }
    ost(b, h, i, d, v0);
    if (d + 1 < 128) ost(b, h, i, d + 1, v1);
  }
  // Score modifier: softcap(score * scale), in log2 units.
  __device__ __forceinline__ float smod(float s) const { return s * 0.127517432f; }
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
};
FZ_DEV void fzb_bcaceac5e94fc4f2(const u16* __restrict__ p0, const u16* __restrict__ p1, u16* __restrict__ p2, i64 dim_B, i64 dim_S, i64 dim_T) {
  const fzb_bcaceac5e94fc4f2_ctx c = {p0, p1, p2, dim_B, dim_S, dim_T};
  fz_att_decode<128, 128, 128, 3, 0, true>(c, fz_workspace, (i64)(sizeof(fz_workspace) / sizeof(float)));
}
FZ_DEV void fzb_bcaceac5e94fc4f2_prefill(const u16* __restrict__ p0, const u16* __restrict__ p1, u16* __restrict__ p2, i64 dim_B, i64 dim_S, i64 dim_T) {
  const fzb_bcaceac5e94fc4f2_ctx c = {p0, p1, p2, dim_B, dim_S, dim_T};
  fz_att_prefill<128, 128, 64, 128, 1, true>(c);
}

extern "C" __global__ void __launch_bounds__(128, 1) k02_attention_attention(const u16* __restrict__ v22, const u16* __restrict__ v9_kv, u16* __restrict__ v58_a, i64 dim_B, i64 dim_S, i64 dim_T) { fzb_bcaceac5e94fc4f2(v22, v9_kv, v58_a, dim_B, dim_S, dim_T); }
extern "C" __global__ void __launch_bounds__(128, 1) k02_attention_attention_prefill(const u16* __restrict__ v22, const u16* __restrict__ v9_kv, u16* __restrict__ v58_a, i64 dim_B, i64 dim_S, i64 dim_T) { fzb_bcaceac5e94fc4f2_prefill(v22, v9_kv, v58_a, dim_B, dim_S, dim_T); }
