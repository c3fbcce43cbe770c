// body of k01_gemm_matmul_rope_append
// Split-K partials and tile arrival counters (zero at load, n a launch: fz_split_join).
static __device__ __align__(16) float fzb_284880daa2e1d3e6_ws[184320];
static __device__ unsigned long long fzb_284880daa2e1d3e6_count[144];
FZ_DEV i64 fzb_284880daa2e1d3e6_ntiles256(i64 dim_B, i64 dim_S, i64 dim_T) {
  return 24;
}
FZ_DEV int fzb_284880daa2e1d3e6_tile256(i64 t, i64* u, i64 dim_B, i64 dim_S, i64 dim_T) {
  if (t < 16) { *u = t; return 0; }
  t -= 16;
  if (t < 4) { *u = t; return 1; }
  t -= 4;
  if (t < 4) { *u = t; return 2; }
  t -= 4;
  *u = 0;
  return -1;
}
FZ_DEV i64 fzb_284880daa2e1d3e6_col256(int seg, i64 u, int s, i64 dim_B, i64 dim_S, i64 dim_T) {
  switch (seg) {
    case 0: {
      const int q = s / 128, j = s % 128;
      if (q >= 2) return -1;
      const i64 beta = u * 128 + j;
      if (beta >= 2048) return -1;
      const i64 offs[2] = {0, 64};
      return (((beta/64)*128) + (beta%64)) + offs[q];
    }
    case 1: {
      const int q = s / 128, j = s % 128;
      if (q >= 2) return -1;
      const i64 beta = u * 128 + j;
      if (beta >= 512) return -1;
      const i64 offs[2] = {0, 64};
      return (4096 + (((beta/64)*128) + (beta%64))) + offs[q];
    }
    case 2: {
      const int q = s / 256, j = s % 256;
      if (q >= 1) return -1;
      const i64 beta = u * 256 + j;
      if (beta >= 1024) return -1;
      const i64 offs[1] = {0};
      return (5120 + beta) + offs[q];
    }
  }
  return -1;
}
FZ_DEV i64 fzb_284880daa2e1d3e6_ntiles64(i64 dim_B, i64 dim_S, i64 dim_T) {
  return 96;
}
FZ_DEV int fzb_284880daa2e1d3e6_tile64(i64 t, i64* u, i64 dim_B, i64 dim_S, i64 dim_T) {
  if (t < 64) { *u = t; return 0; }
  t -= 64;
  if (t < 16) { *u = t; return 1; }
  t -= 16;
  if (t < 16) { *u = t; return 2; }
  t -= 16;
  *u = 0;
  return -1;
}
FZ_DEV i64 fzb_284880daa2e1d3e6_col64(int seg, i64 u, int s, i64 dim_B, i64 dim_S, i64 dim_T) {
  switch (seg) {
    case 0: {
      const int q = s / 32, j = s % 32;
      if (q >= 2) return -1;
      const i64 beta = u * 32 + j;
      if (beta >= 2048) return -1;
      const i64 offs[2] = {0, 64};
      return (((beta/64)*128) + (beta%64)) + offs[q];
    }
    case 1: {
      const int q = s / 32, j = s % 32;
      if (q >= 2) return -1;
      const i64 beta = u * 32 + j;
      if (beta >= 512) return -1;
      const i64 offs[2] = {0, 64};
      return (4096 + (((beta/64)*128) + (beta%64))) + offs[q];
    }
    case 2: {
      const int q = s / 64, j = s % 64;
      if (q >= 1) return -1;
      const i64 beta = u * 64 + j;
      if (beta >= 1024) return -1;
      const i64 offs[1] = {0};
      return (5120 + beta) + offs[q];
    }
  }
  return -1;
}
FZ_DEV void fzb_284880daa2e1d3e6_epi0(const u16* __restrict__ p0, const u16* __restrict__ p1, const int* __restrict__ p2, u16* __restrict__ p3, u16* __restrict__ p4, i64 dim_B, i64 dim_S, i64 dim_T, const i64 ub, const i64 r, const i64 c0, const float* ev, const i64 nv) {
  const i64 oc0 = (r/dim_S);
  const i64 oc1 = (r%dim_S);
  {
    const float t1 = fz_ld_i32(p2 + ((oc0*dim_S) + oc1));
    float rc2, rs3;
    fz_rope_cs(t1, fz_rope_411e848000000000_128[((c0%128)%64)], &rc2, &rs3);
    const float t4 = ev[0] * rc2 + ((c0%128) < 64 ? -ev[1] : ev[1]) * rs3;
    fz_st_bf16(p3 + ((((oc0*(4096*dim_S)) + (oc1*4096)) + ((c0/128)*128)) + (c0%128)), t4);
  }
  {
    const float t5 = fz_ld_i32(p2 + ((oc0*dim_S) + oc1));
    float rc6, rs7;
    fz_rope_cs(t5, fz_rope_411e848000000000_128[(((c0 + 64)%128)%64)], &rc6, &rs7);
    const float t8 = ev[1] * rc6 + (((c0 + 64)%128) < 64 ? -ev[0] : ev[0]) * rs7;
    fz_st_bf16(p3 + ((((oc0*(4096*dim_S)) + (oc1*4096)) + (((c0 + 64)/128)*128)) + ((c0 + 64)%128)), t8);
  }
}
FZ_DEV void fzb_284880daa2e1d3e6_epi1(const u16* __restrict__ p0, const u16* __restrict__ p1, const int* __restrict__ p2, u16* __restrict__ p3, u16* __restrict__ p4, i64 dim_B, i64 dim_S, i64 dim_T, const i64 ub, const i64 r, const i64 c0, const float* ev, const i64 nv) {
  const i64 oc0 = (r/dim_S);
  const i64 oc1 = (r%dim_S);
  {
    const float t9 = fz_ld_i32(p2 + ((oc0*dim_S) + oc1));
    float rc10, rs11;
    fz_rope_cs(t9, fz_rope_411e848000000000_128[(((c0 - 4096)%128)%64)], &rc10, &rs11);
    const float t12 = ev[0] * rc10 + (((c0 - 4096)%128) < 64 ? -ev[1] : ev[1]) * rs11;
    fz_st_bf16((p4 + (((((oc0*8) + ((c0 - 4096)/128))*(dim_S + dim_T)) + (dim_T + oc1))*128)) + ((c0 - 4096)%128), t12);
  }
  {
    const float t13 = fz_ld_i32(p2 + ((oc0*dim_S) + oc1));
    float rc14, rs15;
    fz_rope_cs(t13, fz_rope_411e848000000000_128[((((c0 + 64) - 4096)%128)%64)], &rc14, &rs15);
    const float t16 = ev[1] * rc14 + ((((c0 + 64) - 4096)%128) < 64 ? -ev[0] : ev[0]) * rs15;
    fz_st_bf16((p4 + (((((oc0*8) + (((c0 + 64) - 4096)/128))*(dim_S + dim_T)) + (dim_T + oc1))*128)) + (((c0 + 64) - 4096)%128), t16);
  }
}
FZ_DEV void fzb_284880daa2e1d3e6_epi2(const u16* __restrict__ p0, const u16* __restrict__ p1, const int* __restrict__ p2, u16* __restrict__ p3, u16* __restrict__ p4, i64 dim_B, i64 dim_S, i64 dim_T, const i64 ub, const i64 r, const i64 c0, const float* ev, const i64 nv) {
  const i64 oc0 = (r/dim_S);
  const i64 oc1 = (r%dim_S);
  {
    fz_st_bf16((p4 + ((((((dim_B + oc0)*8) + ((c0 - 5120)/128))*(dim_S + dim_T)) + (dim_T + oc1))*128)) + ((c0 - 5120)%128), ev[0]);
  }
}
struct fzb_284880daa2e1d3e6_ctx {
  const u16* p0;
  const u16* p1;
  const int* p2;
  u16* p3;
  u16* p4;
  i64 dim_B;
  i64 dim_S;
  i64 dim_T;
  using AT = u16;
  using BT = u16;
  FZ_DEV float lda(const AT* p) { return fz_ld_bf16(p); }
  FZ_DEV void lda8(float* v, const AT* p) { fz_ld8_bf16(v, p); }
  FZ_DEV float ldb(const BT* p) { return fz_ld_bf16(p); }
  FZ_DEV void ldb8(float* v, const BT* p) { fz_ld8_bf16(v, p); }
  FZ_DEV void unpackb(float* v, uint4 r) { fz_unpack_bf16(v, r); }
  static constexpr bool AK = true, BK = false, BN = true, RAW16 = true, BIG = false;
  static constexpr int AVEC = 16, BVEC = 16, TN = 256, STAGED = 4096;
  // Element (r, k) of unit ub's left operand.
  __device__ __forceinline__ const AT* a(i64 ub, i64 r, i64 k) const {
    const i64 ar0 = (r/dim_S);
    const i64 ar1 = (r%dim_S);
    return p0 + (((ar0*(4096*dim_S)) + (ar1*4096)) + k);
  }
  // Element (k, n) of unit ub's right operand.
  __device__ __forceinline__ const BT* b(i64 ub, i64 k, i64 n) const {
    return p1 + ((k*6144) + n);
  }
  static constexpr bool BF16 = true;
  static constexpr int GV_TN = 256, GV_ROWS = 32, GV_STAGES = 7, GV_STAGE_BYTES = 20480;
  static constexpr bool BSIMPLE = true;
  // The weight's K stride.
  __device__ __forceinline__ i64 bks() const { return 6144; }
  FZ_DEV int nslot(int seg, int wn, int nt) {
    switch (seg) {
      case 0: return (nt / 2) * 32 + wn * 16 + (nt % 2) * 8;
      case 1: return (nt / 2) * 32 + wn * 16 + (nt % 2) * 8;
      case 2: return (nt / 4) * 64 + wn * 32 + (nt % 4) * 8;
    }
    return 0;
  }
};
FZ_DEV void fzb_284880daa2e1d3e6_mma(const u16* __restrict__ p0, const u16* __restrict__ p1, const int* __restrict__ p2, u16* __restrict__ p3, u16* __restrict__ p4, i64 dim_B, i64 dim_S, i64 dim_T, const i64 bid, const i64 nblk, u16* smem, const u16** sArow, const u16** sBrow, i64* scol) {
  const fzb_284880daa2e1d3e6_ctx cx = {p0, p1, p2, p3, p4, dim_B, dim_S, dim_T};
  const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
  const int wm = (wid >> 1) & 3, wn = wid & 1;
  const i64 UB = 1, MR_ = (dim_B*dim_S);
  const i64 ntile = fzb_284880daa2e1d3e6_ntiles64(dim_B, dim_S, dim_T);
  const i64 nrt = (MR_ + 127) / 128;
  for (i64 item = bid; item < UB * nrt * ntile; item += nblk) {
    const i64 t = item % ntile, rest = item / ntile, rt = rest % nrt, ub = rest / nrt;
    const i64 r0 = rt * 128;
    i64 u;
    const int seg = fzb_284880daa2e1d3e6_tile64(t, &u, dim_B, dim_S, dim_T);
    const i64 kv = 4096, nv = 6144;
    __syncthreads();
    for (int s = tid; s < 64; s += blockDim.x) {
      const i64 c = fzb_284880daa2e1d3e6_col64(seg, u, s, dim_B, dim_S, dim_T);
      scol[s] = c < nv ? c : -1;
    }
    // Row pointers of A (and of B^T for a K-contiguous B).
    for (int i = tid; i < 128; i += blockDim.x) {
      const i64 r = r0 + i;
      sArow[i] = r < MR_ ? (const u16*)cx.a(ub, r, 0) : 0;
    }
    __syncthreads();
    float acc[2][4][4];
    fz_mma_mainloop<fzb_284880daa2e1d3e6_ctx, true, 128, 64, 32, 3>(cx, ub, kv, seg, smem, sArow, sBrow, scol, acc);
    if (wid < 8) {
      switch (seg) {
        case 0: {
          #pragma unroll
          for (int mt = 0; mt < 2; mt++) {
            #pragma unroll
            for (int h = 0; h < 2; h++) {
              const i64 r = r0 + wm * 32 + mt * 16 + h * 8 + (lane >> 2);
              if (r >= MR_) continue;
              #pragma unroll
              for (int jb = 0; jb < 2; jb++) {
                #pragma unroll
                for (int c = 0; c < 2; c++) {
                  const int j = wn * 16 + jb * 8 + (lane & 3) * 2 + c;
                  const i64 beta = u * 32 + j;
                  if (beta >= 2048) continue;
                  const i64 c0 = (((beta/64)*128) + (beta%64));
                  float ev[2];
                  ev[0] = acc[mt][0 + jb][h * 2 + c];
                  ev[1] = acc[mt][2 + jb][h * 2 + c];
                  fzb_284880daa2e1d3e6_epi0(p0, p1, p2, p3, p4, dim_B, dim_S, dim_T, ub, r, c0, ev, nv);
                }
              }
            }
          }
          break;
        }
        case 1: {
          #pragma unroll
          for (int mt = 0; mt < 2; mt++) {
            #pragma unroll
            for (int h = 0; h < 2; h++) {
              const i64 r = r0 + wm * 32 + mt * 16 + h * 8 + (lane >> 2);
              if (r >= MR_) continue;
              #pragma unroll
              for (int jb = 0; jb < 2; jb++) {
                #pragma unroll
                for (int c = 0; c < 2; c++) {
                  const int j = wn * 16 + jb * 8 + (lane & 3) * 2 + c;
                  const i64 beta = u * 32 + j;
                  if (beta >= 512) continue;
                  const i64 c0 = (4096 + (((beta/64)*128) + (beta%64)));
                  float ev[2];
                  ev[0] = acc[mt][0 + jb][h * 2 + c];
                  ev[1] = acc[mt][2 + jb][h * 2 + c];
                  fzb_284880daa2e1d3e6_epi1(p0, p1, p2, p3, p4, dim_B, dim_S, dim_T, ub, r, c0, ev, nv);
                }
              }
            }
          }
          break;
        }
        case 2: {
          #pragma unroll
          for (int mt = 0; mt < 2; mt++) {
            #pragma unroll
            for (int h = 0; h < 2; h++) {
              const i64 r = r0 + wm * 32 + mt * 16 + h * 8 + (lane >> 2);
              if (r >= MR_) continue;
              #pragma unroll
              for (int jb = 0; jb < 4; jb++) {
                #pragma unroll
                for (int c = 0; c < 2; c++) {
                  const int j = wn * 32 + jb * 8 + (lane & 3) * 2 + c;
                  const i64 beta = u * 64 + j;
                  if (beta >= 1024) continue;
                  const i64 c0 = (5120 + beta);
                  float ev[1];
                  ev[0] = acc[mt][0 + jb][h * 2 + c];
                  fzb_284880daa2e1d3e6_epi2(p0, p1, p2, p3, p4, dim_B, dim_S, dim_T, ub, r, c0, ev, nv);
                }
              }
            }
          }
          break;
        }
      }
    }
  }
}
FZ_DEV void fzb_284880daa2e1d3e6(const u16* __restrict__ p0, const u16* __restrict__ p1, const int* __restrict__ p2, u16* __restrict__ p3, u16* __restrict__ p4, i64 dim_B, i64 dim_S, i64 dim_T) {
  __shared__ __align__(128) float smem[9216];
  __shared__ i64 scol[256];
  __shared__ int svec[32];
  float* As = smem; float* red = smem;
  const fzb_284880daa2e1d3e6_ctx cx = {p0, p1, p2, p3, p4, dim_B, dim_S, dim_T};
  extern __shared__ __align__(128) unsigned char fz_gemv_dsm[];
  unsigned char* ring = fz_gemv_dsm + ((1024u - (fz_smem_addr(fz_gemv_dsm) & 1023u)) & 1023u);
  float* res = (dim_B*dim_S) > 1 ? (float*)ring : smem + 4096;
  constexpr int nsplit = 5;
  const int sp = blockIdx.z;
  const i64 nblk = (i64)gridDim.x * gridDim.y, bid = blockIdx.x + (i64)gridDim.x * blockIdx.y;
  if ((dim_B*dim_S) > 64 && fz_aligned(p0, 16) && fz_aligned(p1, 16) && fz_aligned(p0 + 4096, 16) && fz_aligned(p1 + 6144, 16)) {
    __shared__ const u16* sArow[128];
    __shared__ const u16* sBrow[64];
    fz_warm(fz_rope_411e848000000000_128);
    fz_grid_sync();
    if (sp == 0) fzb_284880daa2e1d3e6_mma(p0, p1, p2, p3, p4, dim_B, dim_S, dim_T, bid, nblk, (u16*)smem, sArow, sBrow, scol);
    return;
  }
  bool waited = false;
  const i64 UB = 1, MR_ = (dim_B*dim_S);
  const i64 ntile = fzb_284880daa2e1d3e6_ntiles256(dim_B, dim_S, dim_T);
  const i64 nrc = (MR_ + 63) / 64;
  for (i64 item = bid; item < UB * nrc * ntile; item += nblk) {
    const i64 t = item % ntile, rest = item / ntile, rc = rest % nrc, ub = rest / nrc;
    const i64 r0 = rc * 64;
    const int mr = (int)fz_min64(64, MR_ - r0);
    i64 u;
    const int seg = fzb_284880daa2e1d3e6_tile256(t, &u, dim_B, dim_S, dim_T);
    const i64 kv = 4096, nv = 6144;
    __syncthreads();
    for (int s = threadIdx.x; s < 256; s += blockDim.x) {
      const i64 c = fzb_284880daa2e1d3e6_col256(seg, u, s, dim_B, dim_S, dim_T);
      scol[s] = c < nv ? c : -1;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
      bool ok = true;
      for (int i = 0; i < 8; i++) ok = ok && scol[threadIdx.x * 8 + i] >= 0 && scol[threadIdx.x * 8 + i] == scol[threadIdx.x * 8] + i;
      svec[threadIdx.x] = ok && (scol[threadIdx.x * 8] & 7) == 0;
    }
    __syncthreads();
    const i64 kper = fz_gemv_kper(kv, nsplit);
    const i64 k0 = fz_min64(kv, sp * kper), k1 = fz_min64(kv, k0 + kper);
    if (!waited) {
      fz_gemv_prefetch(cx, ub, k0, fz_min64(k1, k0 + 128), scol);
      fz_warm(fzb_284880daa2e1d3e6_ws); fz_warm(fzb_284880daa2e1d3e6_count);
      fz_warm(fz_rope_411e848000000000_128);
      fz_grid_sync();
      waited = true;
    }
    const bool tc = mr > 1 && fz_gemv_tc_ok(cx, ub, r0, mr, scol, svec);
    if (tc) {
      if (mr <= 8) fz_gemv_wg_tile<fzb_284880daa2e1d3e6_ctx, 1>(cx, ub, r0, mr, k0, k1, scol, ring, res);
      else if (mr <= 16) fz_gemv_wg_tile<fzb_284880daa2e1d3e6_ctx, 2>(cx, ub, r0, mr, k0, k1, scol, ring, res);
      else if (mr <= 32) fz_gemv_wg_tile<fzb_284880daa2e1d3e6_ctx, 4>(cx, ub, r0, mr, k0, k1, scol, ring, res);
      else fz_gemv_wg_tile<fzb_284880daa2e1d3e6_ctx, 8>(cx, ub, r0, mr, k0, k1, scol, ring, res);
    }
    else
    for (int p = 0; p < mr; p += 1) {
      fz_gemv_tile<fzb_284880daa2e1d3e6_ctx, 1>(cx, ub, r0 + p, 1, k0, k1, scol, svec, As, red, res + p * 256);
    }
    const i64 wrow = (ub * MR_) + r0;
    for (int e = threadIdx.x; e < mr * 64; e += blockDim.x) {
      const int m = e / 64, s = (e % 64) * 4;
      float* dst = fzb_284880daa2e1d3e6_ws + (i64)sp * (6144*dim_B*dim_S) + (wrow + m) * 6144;
      const float* src = res + m * 256 + s;
      if (svec[s / 8]) {
        __stcg((float4*)(dst + scol[s]), *(const float4*)src);
        continue;
      }
      #pragma unroll
      for (int i = 0; i < 4; i++) if (scol[s + i] >= 0) __stcg(dst + scol[s + i], src[i]);
    }
    __syncthreads();
    if (threadIdx.x == 0) fz_split_join(&fzb_284880daa2e1d3e6_count[item], nsplit);
    __syncthreads();
    switch (seg) {
      case 0: {
        const int per = (mr * 128 + nsplit - 1) / nsplit, lo = sp * per, hi = min(mr * 128, lo + per);
        for (int e0 = lo + threadIdx.x; e0 < hi; e0 += 4 * blockDim.x) {
          float sum[4][2];
          #pragma unroll
          for (int v = 0; v < 4; v++) for (int o = 0; o < 2; o++) sum[v][o] = 0.f;
          for (int q0 = 0; q0 < nsplit; q0 += 5) {
            float part[4][2][5];
            #pragma unroll
            for (int v = 0; v < 4; v++) {
              const int e = e0 + v * blockDim.x < hi ? e0 + v * blockDim.x : e0;
              const int m = e / 128, j = e % 128;
              const float* row = fzb_284880daa2e1d3e6_ws + ((ub * MR_) + r0 + m) * 6144;
              #pragma unroll
              for (int o = 0; o < 2; o++) {
                const i64 sc = scol[o * 128 + j];
                const float* src = row + (sc >= 0 ? sc : 0);
                #pragma unroll
                for (int q = 0; q < 5; q++) part[v][o][q] = q0 + q < nsplit ? __ldcg(src + (i64)(q0 + q) * (6144*dim_B*dim_S)) : 0.f;
              }
            }
            #pragma unroll
            for (int v = 0; v < 4; v++) for (int o = 0; o < 2; o++) for (int q = 0; q < 5; q++) if (q0 + q < nsplit) sum[v][o] += part[v][o][q];
          }
          const bool whole = e0 + 3 * blockDim.x < hi && u * 128 + 128 <= 2048;
          if (whole) {
            #pragma unroll
            for (int v = 0; v < 4; v++) {
              const int e = e0 + v * blockDim.x;
              const int m = e / 128, j = e % 128;
              const i64 beta = u * 128 + j;
              const i64 c0 = (((beta/64)*128) + (beta%64));
              float ev[2];
              ev[0] = sum[v][0];
              ev[1] = sum[v][1];
              fzb_284880daa2e1d3e6_epi0(p0, p1, p2, p3, p4, dim_B, dim_S, dim_T, ub, r0 + m, c0, ev, nv);
            }
          } else {
            #pragma unroll
            for (int v = 0; v < 4; v++) {
              const int e = e0 + v * blockDim.x;
              if (e >= hi) break;
              const int m = e / 128, j = e % 128;
              const i64 beta = u * 128 + j;
              if (beta >= 2048) continue;
              const i64 c0 = (((beta/64)*128) + (beta%64));
              float ev[2];
              ev[0] = sum[v][0];
              ev[1] = sum[v][1];
              fzb_284880daa2e1d3e6_epi0(p0, p1, p2, p3, p4, dim_B, dim_S, dim_T, ub, r0 + m, c0, ev, nv);
            }
          }
        }
        break;
      }
      case 1: {
        const int per = (mr * 128 + nsplit - 1) / nsplit, lo = sp * per, hi = min(mr * 128, lo + per);
        for (int e0 = lo + threadIdx.x; e0 < hi; e0 += 4 * blockDim.x) {
          float sum[4][2];
          #pragma unroll
          for (int v = 0; v < 4; v++) for (int o = 0; o < 2; o++) sum[v][o] = 0.f;
          for (int q0 = 0; q0 < nsplit; q0 += 5) {
            float part[4][2][5];
            #pragma unroll
            for (int v = 0; v < 4; v++) {
              const int e = e0 + v * blockDim.x < hi ? e0 + v * blockDim.x : e0;
              const int m = e / 128, j = e % 128;
              const float* row = fzb_284880daa2e1d3e6_ws + ((ub * MR_) + r0 + m) * 6144;
              #pragma unroll
              for (int o = 0; o < 2; o++) {
                const i64 sc = scol[o * 128 + j];
                const float* src = row + (sc >= 0 ? sc : 0);
                #pragma unroll
                for (int q = 0; q < 5; q++) part[v][o][q] = q0 + q < nsplit ? __ldcg(src + (i64)(q0 + q) * (6144*dim_B*dim_S)) : 0.f;
              }
            }
            #pragma unroll
            for (int v = 0; v < 4; v++) for (int o = 0; o < 2; o++) for (int q = 0; q < 5; q++) if (q0 + q < nsplit) sum[v][o] += part[v][o][q];
          }
          const bool whole = e0 + 3 * blockDim.x < hi && u * 128 + 128 <= 512;
          if (whole) {
            #pragma unroll
            for (int v = 0; v < 4; v++) {
              const int e = e0 + v * blockDim.x;
              const int m = e / 128, j = e % 128;
              const i64 beta = u * 128 + j;
              const i64 c0 = (4096 + (((beta/64)*128) + (beta%64)));
              float ev[2];
              ev[0] = sum[v][0];
              ev[1] = sum[v][1];
              fzb_284880daa2e1d3e6_epi1(p0, p1, p2, p3, p4, dim_B, dim_S, dim_T, ub, r0 + m, c0, ev, nv);
            }
          } else {
            #pragma unroll
            for (int v = 0; v < 4; v++) {
              const int e = e0 + v * blockDim.x;
              if (e >= hi) break;
              const int m = e / 128, j = e % 128;
              const i64 beta = u * 128 + j;
              if (beta >= 512) continue;
              const i64 c0 = (4096 + (((beta/64)*128) + (beta%64)));
              float ev[2];
              ev[0] = sum[v][0];
              ev[1] = sum[v][1];
              fzb_284880daa2e1d3e6_epi1(p0, p1, p2, p3, p4, dim_B, dim_S, dim_T, ub, r0 + m, c0, ev, nv);
            }
          }
        }
        break;
      }
      case 2: {
        const int per = (mr * 256 + nsplit - 1) / nsplit, lo = sp * per, hi = min(mr * 256, lo + per);
        for (int e0 = lo + threadIdx.x; e0 < hi; e0 += 4 * blockDim.x) {
          float sum[4][1];
          #pragma unroll
          for (int v = 0; v < 4; v++) for (int o = 0; o < 1; o++) sum[v][o] = 0.f;
          for (int q0 = 0; q0 < nsplit; q0 += 5) {
            float part[4][1][5];
            #pragma unroll
            for (int v = 0; v < 4; v++) {
              const int e = e0 + v * blockDim.x < hi ? e0 + v * blockDim.x : e0;
              const int m = e / 256, j = e % 256;
              const float* row = fzb_284880daa2e1d3e6_ws + ((ub * MR_) + r0 + m) * 6144;
              #pragma unroll
              for (int o = 0; o < 1; o++) {
                const i64 sc = scol[o * 256 + j];
                const float* src = row + (sc >= 0 ? sc : 0);
                #pragma unroll
                for (int q = 0; q < 5; q++) part[v][o][q] = q0 + q < nsplit ? __ldcg(src + (i64)(q0 + q) * (6144*dim_B*dim_S)) : 0.f;
              }
            }
            #pragma unroll
            for (int v = 0; v < 4; v++) for (int o = 0; o < 1; o++) for (int q = 0; q < 5; q++) if (q0 + q < nsplit) sum[v][o] += part[v][o][q];
          }
          const bool whole = e0 + 3 * blockDim.x < hi && u * 256 + 256 <= 1024;
          if (whole) {
            #pragma unroll
            for (int v = 0; v < 4; v++) {
              const int e = e0 + v * blockDim.x;
              const int m = e / 256, j = e % 256;
              const i64 beta = u * 256 + j;
              const i64 c0 = (5120 + beta);
              float ev[1];
              ev[0] = sum[v][0];
              fzb_284880daa2e1d3e6_epi2(p0, p1, p2, p3, p4, dim_B, dim_S, dim_T, ub, r0 + m, c0, ev, nv);
            }
          } else {
            #pragma unroll
            for (int v = 0; v < 4; v++) {
              const int e = e0 + v * blockDim.x;
              if (e >= hi) break;
              const int m = e / 256, j = e % 256;
              const i64 beta = u * 256 + j;
              if (beta >= 1024) continue;
              const i64 c0 = (5120 + beta);
              float ev[1];
              ev[0] = sum[v][0];
              fzb_284880daa2e1d3e6_epi2(p0, p1, p2, p3, p4, dim_B, dim_S, dim_T, ub, r0 + m, c0, ev, nv);
            }
          }
        }
        break;
      }
    }
  }
  if (!waited) fz_grid_sync();
}

extern "C" __global__ void __launch_bounds__(256, 1) k01_gemm_matmul_rope_append(const u16* __restrict__ v16_h, const u16* __restrict__ v4_wqkv, const int* __restrict__ v2_pos, u16* __restrict__ v22, u16* __restrict__ v9_kv, i64 dim_B, i64 dim_S, i64 dim_T) { fzb_284880daa2e1d3e6(v16_h, v4_wqkv, v2_pos, v22, v9_kv, dim_B, dim_S, dim_T); }
