// body of k02_attention_attention
struct fzb_77528ba90ee569ca_ctx {
  const float* p0;
  const float* p1;
  const int* p2;
  const int* p3;
  float* p4;
  i64 dim_B;
  i64 dim_N;
  i64 dim_T;
  // Head dim, query heads, kv heads, query heads per kv head, key sources;
  // query rows a pass, keys a tile, queries a prefill block, threads a block.
  static constexpr int DH = 8, NH = 4, NG = 2, GRP = 2, NSRC = 1, QP = 8, BC = 32, QB = 128, NT = 256;
  // Score scale (on the queries), softcap (0: none), mask.
  static constexpr float SCALE = 0.353553385f, CAP = 0.0f;
  static constexpr bool CAUSAL = true, WINDOW = false;
  // Score bias (added to the scaled score before softcap), its factor.
  static constexpr bool BIAS = false;
  // Batch, queries per sequence (varlen: every packed token).
  __device__ __forceinline__ i64 nb() const { return dim_B; }
  __device__ __forceinline__ i64 nsq() const { return dim_N; }
  // Packed queries: sequence b's tokens.
  __device__ __forceinline__ i64 qlen(i64 b) const { return (i64)p2[b + 1] - (i64)p2[b]; }
  // Keys of each source for sequence b.
  __device__ __forceinline__ void lens(i64 b, i64 (&n)[NSRC]) const { n[0] = fz_min64(fz_seqlen_ragged(p3, b), (dim_N + dim_T)); }
  // The source of key t of kv head g, and its K and V rows' offsets in the
  // source's buffers.
  __device__ __forceinline__ int krow(i64 b, i64 g, i64 t, const i64 (&n)[NSRC], i64& rk, i64& rv) const {
    rk = fz_ragged_row(p3, b, g, t, 0, dim_B, 2, 8);
    rv = fz_ragged_row(p3, b, g, t, 1, dim_B, 2, 8);
    return 0;
  }
  // Whether K is stored transposed, a key a column of its buffer (its row
  // the address of its dim 0; dim d kdo(d) further).
  static constexpr bool KEYST = false;
  // K and V: the element type, the alignment of an 8-element load, the
  // buffers of source src, loads of one or 8 elements as floats.
  using KT = float;
  static constexpr int KVEC = 16;
  __device__ __forceinline__ const KT* kbuf(int src) const { return p1; }
  __device__ __forceinline__ const KT* vbuf(int src) const { return p1; }
  FZ_DEV float ldkv(const KT* p) { return fz_ld_f32(p); }
  FZ_DEV void ldkv8(float* x, const KT* p) { fz_ld8_f32(x, p); }
  // Queries and output: the element types, a load and a store as floats,
  // the address of element d of query i of head h and of its output.
  using QT = float;
  using OT = float;
  FZ_DEV float ldq(const QT* p) { return fz_ld_f32(p); }
  FZ_DEV void sto(OT* p, float v) { fz_st_f32(p, v); }
  __device__ __forceinline__ const QT* q(i64 b, i64 h, i64 i, int d) const { return p0 + (((h*8) + (((i64)p2[b] + i)*32)) + d); }
  __device__ __forceinline__ OT* out(i64 b, i64 h, i64 i, int d) const { return p4 + (((h*8) + (((i64)p2[b] + i)*32)) + d); }
};
FZ_DEV void fzb_77528ba90ee569ca(const float* __restrict__ p0, const float* __restrict__ p1, const int* __restrict__ p2, const int* __restrict__ p3, float* __restrict__ p4, i64 dim_B, i64 dim_N, i64 dim_T) {
  const fzb_77528ba90ee569ca_ctx c = {p0, p1, p2, p3, p4, dim_B, dim_N, dim_T};
  fz_att_simt_varlen(c);
}

extern "C" __global__ void __launch_bounds__(256, 1) k02_attention_attention(const float* __restrict__ v25, const float* __restrict__ v11_kv, const int* __restrict__ v3_qo_indptr, const int* __restrict__ v4_kv_indptr, float* __restrict__ v61_a, i64 dim_B, i64 dim_N, i64 dim_T) { fz_grid_sync(); fzb_77528ba90ee569ca(v25, v11_kv, v3_qo_indptr, v4_kv_indptr, v61_a, dim_B, dim_N, dim_T); }
