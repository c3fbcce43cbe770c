/*
 * The device support code every module starts with: integer types, dtype
 * conversions (bit operations and inline PTX cvt), vector loads and stores,
 * math, warp and block reductions, rotary angles, KV-cache addressing and the
 * cp.async / ldmatrix / mma.sync wrappers. It includes no header: NVRTC
 * compiles it as it is, for sm_80 and later.
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */
typedef long long i64;
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;
#define FZ_DEV static __device__ __forceinline__
#define FZ_INF __int_as_float(0x7f800000)

FZ_DEV i64 fz_min64(i64 a, i64 b) { return a < b ? a : b; }
FZ_DEV i64 fz_max64(i64 a, i64 b) { return a > b ? a : b; }
FZ_DEV i64 fz_cdiv64(i64 a, i64 b) { return (a + b - 1) / b; }

// ---- dtype conversions ----
FZ_DEV float fz_bf16_f32(u16 h) { return __uint_as_float(((u32)h) << 16); }
FZ_DEV u16 fz_f32_bf16(float f) { u16 h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
FZ_DEV float fz_f16_f32(u16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
FZ_DEV u16 fz_f32_f16(float f) { u16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
// OCP FP8 E4M3 ("fn"): bias 7, no infinities, S.1111.111 is NaN, largest 448.
FZ_DEV float fz_fp8_f32(u8 b) {
  u32 s = ((u32)b & 0x80u) << 24, e = ((u32)b >> 3) & 15u, m = (u32)b & 7u;
  if (e == 15u && m == 7u) return __uint_as_float(0x7fc00000u);
  if (e == 0u) return __uint_as_float(s | __float_as_uint((float)m * 0.001953125f));
  return __uint_as_float(s | ((e + 120u) << 23) | (m << 20));
}
FZ_DEV u8 fz_f32_fp8(float f) {
#if __CUDA_ARCH__ >= 890
  u16 r; asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(0.f), "f"(f)); return (u8)(r & 0xffu);
#else
  u32 u = __float_as_uint(f), s = (u >> 24) & 0x80u; float a = fabsf(f);
  if (a != a) return (u8)(s | 0x7fu);
  if (a >= 448.f) return (u8)(s | 0x7eu);
  if (a < 0.015625f) return (u8)(s | (u32)__float2int_rn(a * 512.f));
  u32 ua = __float_as_uint(a); ua += 0x7ffffu + ((ua >> 20) & 1u);
  return (u8)(s | (((ua >> 23) - 120u) << 3) | ((ua >> 20) & 7u));
#endif
}
FZ_DEV float fz_round_bf16(float f) { return fz_bf16_f32(fz_f32_bf16(f)); }
FZ_DEV float fz_round_f16(float f) { return fz_f16_f32(fz_f32_f16(f)); }
FZ_DEV float fz_round_fp8(float f) { return fz_fp8_f32(fz_f32_fp8(f)); }
FZ_DEV float fz_trunc_i32(float f) { return (float)__float2int_rz(f); }
FZ_DEV u32 fz_pack_bf16(float lo, float hi) { u32 r; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r; }
FZ_DEV u32 fz_pack_f16(float lo, float hi) { u32 r; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r; }

// ---- scalar loads and stores, f32 in registers ----
FZ_DEV float fz_ld_bf16(const u16* p) { return fz_bf16_f32(*p); }
FZ_DEV float fz_ld_f16(const u16* p) { return fz_f16_f32(*p); }
FZ_DEV float fz_ld_f32(const float* p) { return *p; }
FZ_DEV float fz_ld_fp8(const u8* p) { return fz_fp8_f32(*p); }
FZ_DEV float fz_ld_i32(const int* p) { return (float)*p; }
FZ_DEV void fz_st_bf16(u16* p, float v) { *p = fz_f32_bf16(v); }
FZ_DEV void fz_st_f16(u16* p, float v) { *p = fz_f32_f16(v); }
FZ_DEV void fz_st_f32(float* p, float v) { *p = v; }
FZ_DEV void fz_st_fp8(u8* p, float v) { *p = fz_f32_fp8(v); }
FZ_DEV void fz_st_i32(int* p, float v) { *p = __float2int_rz(v); }

// ---- 8-element vector loads and stores (16 bytes of bf16/f16) ----
FZ_DEV void fz_unpack_bf16(float* v, uint4 r) {
  u32 w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
  for (int i = 0; i < 4; i++) { v[2*i] = __uint_as_float(w[i] << 16); v[2*i+1] = __uint_as_float(w[i] & 0xffff0000u); }
}
FZ_DEV void fz_unpack_f16(float* v, uint4 r) {
  u32 w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
  for (int i = 0; i < 4; i++) { v[2*i] = fz_f16_f32((u16)(w[i] & 0xffffu)); v[2*i+1] = fz_f16_f32((u16)(w[i] >> 16)); }
}
FZ_DEV void fz_ld8_bf16(float* v, const u16* p) { fz_unpack_bf16(v, *(const uint4*)p); }
FZ_DEV void fz_ld8_f16(float* v, const u16* p) { fz_unpack_f16(v, *(const uint4*)p); }
FZ_DEV void fz_ld8_f32(float* v, const float* p) {
  float4 a = ((const float4*)p)[0], b = ((const float4*)p)[1];
  v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w; v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
}
FZ_DEV void fz_ld8_fp8(float* v, const u8* p) {
  uint2 r = *(const uint2*)p;
#pragma unroll
  for (int i = 0; i < 4; i++) { v[i] = fz_fp8_f32((u8)(r.x >> (8*i))); v[4+i] = fz_fp8_f32((u8)(r.y >> (8*i))); }
}
FZ_DEV void fz_ld8_i32(float* v, const int* p) {
  int4 a = ((const int4*)p)[0], b = ((const int4*)p)[1];
  v[0] = (float)a.x; v[1] = (float)a.y; v[2] = (float)a.z; v[3] = (float)a.w; v[4] = (float)b.x; v[5] = (float)b.y; v[6] = (float)b.z; v[7] = (float)b.w;
}
FZ_DEV void fz_st8_bf16(u16* p, const float* v) {
  *(uint4*)p = make_uint4(fz_pack_bf16(v[0], v[1]), fz_pack_bf16(v[2], v[3]), fz_pack_bf16(v[4], v[5]), fz_pack_bf16(v[6], v[7]));
}
FZ_DEV void fz_st8_f16(u16* p, const float* v) {
  *(uint4*)p = make_uint4(fz_pack_f16(v[0], v[1]), fz_pack_f16(v[2], v[3]), fz_pack_f16(v[4], v[5]), fz_pack_f16(v[6], v[7]));
}
FZ_DEV void fz_st8_f32(float* p, const float* v) {
  ((float4*)p)[0] = make_float4(v[0], v[1], v[2], v[3]); ((float4*)p)[1] = make_float4(v[4], v[5], v[6], v[7]);
}
FZ_DEV void fz_st8_fp8(u8* p, const float* v) {
  u32 lo = 0, hi = 0;
#pragma unroll
  for (int i = 0; i < 4; i++) { lo |= (u32)fz_f32_fp8(v[i]) << (8*i); hi |= (u32)fz_f32_fp8(v[4+i]) << (8*i); }
  *(uint2*)p = make_uint2(lo, hi);
}
FZ_DEV void fz_st8_i32(int* p, const float* v) {
  ((int4*)p)[0] = make_int4(__float2int_rz(v[0]), __float2int_rz(v[1]), __float2int_rz(v[2]), __float2int_rz(v[3]));
  ((int4*)p)[1] = make_int4(__float2int_rz(v[4]), __float2int_rz(v[5]), __float2int_rz(v[6]), __float2int_rz(v[7]));
}
// fz_aligned reports whether p may be read with the 8-element vector loads.
FZ_DEV bool fz_aligned(const void* p, int bytes) { return (((u64)p) & (u64)(bytes - 1)) == 0; }

// ---- math (f32) ----
FZ_DEV float fz_exp(float x) { float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f)); return y; }
FZ_DEV float fz_sigmoid(float x) { return 1.f / (1.f + fz_exp(-x)); }
FZ_DEV float fz_silu(float x) { return x / (1.f + fz_exp(-x)); }
FZ_DEV float fz_gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.7071067811865476f)); }
FZ_DEV float fz_softcap(float x, float c) { return c * tanhf(x / c); }
// fz_rope_cs returns cos and sin of pos * inv (inv = theta^(-2i/dh) from a
// double table), the angle reduced in double so that long contexts keep
// f32 accuracy.
FZ_DEV void fz_rope_cs(float pos, double inv, float* c, float* s) {
  double a = (double)pos * inv;
  a -= 6.283185307179586 * rint(a * 0.15915494309189535);
  *s = __sinf((float)a); *c = __cosf((float)a);
}

// ---- warp and block reductions ----
FZ_DEV float fz_warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
FZ_DEV float fz_warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// fz_ms_merge merges two online-softmax states (max m, sum s of exp(x - m)).
FZ_DEV void fz_ms_merge(float& m, float& s, float m2, float s2) {
  float mm = fmaxf(m, m2);
  if (mm == -FZ_INF) return;
  s = s * fz_exp(m - mm) + s2 * fz_exp(m2 - mm);
  m = mm;
}
FZ_DEV void fz_warp_ms(float& m, float& s) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) { float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o); fz_ms_merge(m, s, m2, s2); }
}
// Block reductions: every thread gets the result. They may be called
// repeatedly; each starts with a barrier protecting its scratch.
FZ_DEV float fz_block_sum(float v) {
  __shared__ float red[32];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  v = fz_warp_sum(v);
  __syncthreads();
  if (lane == 0) red[w] = v;
  __syncthreads();
  if (w == 0) { v = lane < nw ? red[lane] : 0.f; v = fz_warp_sum(v); if (lane == 0) red[0] = v; }
  __syncthreads();
  return red[0];
}
FZ_DEV float fz_block_max(float v) {
  __shared__ float red[32];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  v = fz_warp_max(v);
  __syncthreads();
  if (lane == 0) red[w] = v;
  __syncthreads();
  if (w == 0) { v = lane < nw ? red[lane] : -FZ_INF; v = fz_warp_max(v); if (lane == 0) red[0] = v; }
  __syncthreads();
  return red[0];
}
FZ_DEV void fz_block_ms(float& m, float& s) {
  __shared__ float rm[32], rs[32];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  fz_warp_ms(m, s);
  __syncthreads();
  if (lane == 0) { rm[w] = m; rs[w] = s; }
  __syncthreads();
  if (w == 0) {
    m = lane < nw ? rm[lane] : -FZ_INF; s = lane < nw ? rs[lane] : 0.f;
    fz_warp_ms(m, s);
    if (lane == 0) { rm[0] = m; rs[0] = s; }
  }
  __syncthreads();
  m = rm[0]; s = rs[0];
}
// fz_better orders (value, index) pairs for top-k: larger value, then lower index.
FZ_DEV bool fz_better(float v, i64 i, float v2, i64 i2) { return v > v2 || (v == v2 && i < i2); }
FZ_DEV void fz_block_argmax(float& v, i64& idx) {
  __shared__ float rv[32];
  __shared__ i64 ri[32];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float v2 = __shfl_xor_sync(0xffffffffu, v, o); i64 i2 = __shfl_xor_sync(0xffffffffu, idx, o);
    if (fz_better(v2, i2, v, idx)) { v = v2; idx = i2; }
  }
  __syncthreads();
  if (lane == 0) { rv[w] = v; ri[w] = idx; }
  __syncthreads();
  if (w == 0) {
    v = lane < nw ? rv[lane] : -FZ_INF; idx = lane < nw ? ri[lane] : (i64)0x7fffffffffffffffLL;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      float v2 = __shfl_xor_sync(0xffffffffu, v, o); i64 i2 = __shfl_xor_sync(0xffffffffu, idx, o);
      if (fz_better(v2, i2, v, idx)) { v = v2; idx = i2; }
    }
    if (lane == 0) { rv[0] = v; ri[0] = idx; }
  }
  __syncthreads();
  v = rv[0]; idx = ri[0];
}

// ---- KV-cache layouts ----
// A contiguous cache is stored [2, B, G, T+S, Dh]: each (sequence, kv head)
// has room for its T cached tokens and the S new ones. A paged cache is a
// pool [Pages, 2, G, page, Dh], token t of sequence b in slot t % page of
// page indices[indptr[b] + t / page]; a ragged one is [2, G, N, Dh], token t
// of sequence b in row indptr[b] + t, N = indptr[B]. Page tables and indptr
// describe each sequence after this step's append (FlashInfer's
// convention): its length counts the S new tokens.
FZ_DEV i64 fz_seqlen_paged(const int* indptr, const int* last, i64 b, i64 page) {
  i64 n = (i64)indptr[b + 1] - (i64)indptr[b];
  return n > 0 ? (n - 1) * page + (i64)last[b] : 0;
}
FZ_DEV i64 fz_seqlen_ragged(const int* indptr, i64 b) { return (i64)indptr[b + 1] - (i64)indptr[b]; }
// fz_paged_entry is the page-table entry naming the page of a paged pool
// that holds token t of sequence b.
FZ_DEV const int* fz_paged_entry(const int* indptr, const int* indices, i64 b, i64 t, i64 page) {
  return indices + (i64)indptr[b] + t / page;
}
// fz_paged_at is the element offset of token t (of its sequence) of kv
// head g of the K (c = 0) or V (c = 1) cache in page pg of a paged pool.
FZ_DEV i64 fz_paged_at(i64 pg, i64 g, i64 t, int c, i64 page, i64 ng, i64 dh) {
  return (((pg * 2 + c) * ng + g) * page + t % page) * dh;
}
// fz_paged_row is the element offset of token t of (sequence b, kv head g)
// of the K (c = 0) or V (c = 1) cache in a paged pool.
FZ_DEV i64 fz_paged_row(const int* indptr, const int* indices, i64 b, i64 g, i64 t, int c, i64 page, i64 ng, i64 dh) {
  return fz_paged_at(*fz_paged_entry(indptr, indices, b, t, page), g, t, c, page, ng, dh);
}
// fz_packed_seq is the sequence b of packed token n of nb sequences back to
// back, indptr[b] <= n < indptr[b + 1] (FlashInfer's qo_indptr): the last
// b with indptr[b] <= n, so that empty sequences before it are passed.
FZ_DEV i64 fz_packed_seq(const int* indptr, i64 nb, i64 n) {
  i64 lo = 0, hi = nb - 1;
  while (lo < hi) {
    const i64 mid = (lo + hi + 1) >> 1;
    if ((i64)indptr[mid] <= n) lo = mid; else hi = mid - 1;
  }
  return lo;
}
// fz_ragged_row is the element offset of token t of (b, g) in a ragged
// buffer of nb sequences.
FZ_DEV i64 fz_ragged_row(const int* indptr, i64 b, i64 g, i64 t, int c, i64 nb, i64 ng, i64 dh) {
  return (((i64)c * ng + g) * (i64)indptr[nb] + (i64)indptr[b] + t) * dh;
}

// ---- tensor cores (sm_80+) ----
FZ_DEV u32 fz_smem_addr(const void* p) { return (u32)__cvta_generic_to_shared(p); }
// The cp.async copies ask L2 to fetch the whole 128-byte line (L2::128B):
// our kernels read the rest of it next, and on the H200 it streamed the
// decode attention's K/V 2 to 2.5% faster (bench/results/2026-11-29-h200-decode-attention-3,
// the nohint variant).
FZ_DEV void fz_cp16(void* smem, const void* g, bool pred) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;" :: "r"(fz_smem_addr(smem)), "l"(g), "r"(pred ? 16 : 0));
}
// fz_cp16s copies bytes (0 to 16) of a 16-byte chunk to shared address sa
// and zero-fills the rest; fz_cp16b takes a generic pointer.
FZ_DEV void fz_cp16s(u32 sa, const void* g, int bytes) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;" :: "r"(sa), "l"(g), "r"(bytes));
}
FZ_DEV void fz_cp16b(void* smem, const void* g, int bytes) { fz_cp16s(fz_smem_addr(smem), g, bytes); }
// fz_cp4 copies the 4-byte word at g (null: stores 0) to smem.
FZ_DEV void fz_cp4(void* smem, const void* g) {
  if (g) asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(fz_smem_addr(smem)), "l"(g));
  else *(u32*)smem = 0u;
}
FZ_DEV void fz_cp_commit() { asm volatile("cp.async.commit_group;"); }
template <int N> FZ_DEV void fz_cp_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N)); }
FZ_DEV void fz_ldsm4(u32* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(fz_smem_addr(p)));
}
FZ_DEV void fz_ldsm4t(u32* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(fz_smem_addr(p)));
}
FZ_DEV void fz_mma_bf16(float* d, const u32* a, const u32* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
FZ_DEV void fz_mma_f16(float* d, const u32* a, const u32* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// Timeline probes, in a module that defines FZ_TIMELINE (codegen/cuda's
// Options.Timeline, for fuser bench -timeline): thread 0 of every block
// reads the global timer (ns) as the block enters its entry (fz_tl_enter),
// passes fz_grid_sync and returns from its body (fz_tl_exit).
// fz_timeline keeps, over every block and entry of the kernel, the first
// entry, the first and the last passage and the last return; the host sets
// it to {max, max, 0, 0} before a step.
#ifdef FZ_TIMELINE
__device__ unsigned long long fz_timeline[4];
FZ_DEV unsigned long long fz_tl_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
FZ_DEV void fz_tl_enter() { if (threadIdx.x == 0) atomicMin(&fz_timeline[0], fz_tl_now()); }
FZ_DEV void fz_tl_synced() {
  if (threadIdx.x != 0) return;
  const unsigned long long t = fz_tl_now();
  atomicMin(&fz_timeline[1], t);
  atomicMax(&fz_timeline[2], t);
}
FZ_DEV void fz_tl_exit() { if (threadIdx.x == 0) atomicMax(&fz_timeline[3], fz_tl_now()); }
#endif
// Programmatic dependent launch: fz_grid_sync waits until the kernel
// before this one in the stream has finished and its writes are visible,
// then lets the next kernel start, whose blocks wait in their turn: one
// kernel is ever ahead, its blocks taking the SMs as this one's leave.
// Every kernel calls it before it touches memory the step writes (a GEMV
// first prefetches its first weight rows into L2, the decode attention its
// first keys and values). Launched without the attribute, it is a no-op.
FZ_DEV void fz_grid_sync() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#ifdef FZ_TIMELINE
  fz_tl_synced();
#endif
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
// fz_split_join is a split-K GEMV's meeting point for the splits of one
// tile. Thread 0 of each block calls it between two block barriers, the
// first after the block's partials are written. It counts this split's
// arrival with an acq_rel add, whose release publishes them (release is
// cumulative: the barrier ordered the other threads' writes before it),
// and waits until all n splits of the same launch have arrived: the last
// to arrive acquires the others' partials by the same add (the adds form
// one release sequence), the others by acquire loads of the count. The
// second barrier passes them to the block, as a cooperative grid sync
// does. The counter only grows, n a launch, so that the generation of an
// arrival is its count over n and nothing resets it.
// Every split of the tile must be resident at once, as the launch pass's
// grids (at most one block an SM) are.
FZ_DEV void fz_split_join(unsigned long long* count, int n) {
  unsigned long long old;
  asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], 1;" : "=l"(old) : "l"(count) : "memory");
  const unsigned long long want = (old / (unsigned long long)n + 1) * (unsigned long long)n;
  if (old + 1 == want) return;
  unsigned long long seen;
  for (;;) {
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(seen) : "l"(count) : "memory");
    if (seen >= want) break;
    __nanosleep(32);
  }
}
// FZ_L2_AHEAD is the bytes a kernel's blocks together ask L2 for before
// they wait for the kernel before them, so that the reads start while that
// kernel runs (the decode attention's first keys and values): 24 MiB,
// under half of the H200's 60 MB L2, so that the lines are still there
// when read.
#define FZ_L2_AHEAD (24ll << 20)
// fz_l2_ahead_share is the units of per bytes a block of the launch asks
// L2 for ahead, its even share of FZ_L2_AHEAD.
FZ_DEV i64 fz_l2_ahead_share(i64 per) {
  return FZ_L2_AHEAD / ((i64)gridDim.x * gridDim.y * gridDim.z * per);
}
// fz_prefetch_l2 brings the line holding p into L2.
FZ_DEV void fz_prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" :: "l"(p)); }
// fz_warm touches a module global (a split GEMV's partials and counters, a
// RoPE table, the attention workspace) before the kernel waits for the one
// before it. The global's address is read from a constant bank that lives
// in memory, and the first read on an SM misses the constant caches (ncu's
// imc stall, 4-12% of the samples of the split GEMVs and of the decode
// attention, right after the wait). Thread t asks L2 for line t mod n of
// the global's first n <= 4 lines, so that every warp reads the address
// here and a table's few lines are in L2 when the epilogue reads them.
template <class T, unsigned long long N>
FZ_DEV void fz_warm(const T (&g)[N]) {
  constexpr unsigned long long lines = sizeof(g) >= 512 ? 4 : (sizeof(g) + 127) / 128;
  fz_prefetch_l2((const char*)g + threadIdx.x % lines * 128);
}
