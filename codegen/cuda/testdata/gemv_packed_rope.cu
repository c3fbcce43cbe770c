// body of k01_gemm_matmul_rope_append
FZ_DEV i64 fzb_6e62fc3e8ab0ad77_ntiles256(i64 dim_B, i64 dim_N, i64 dim_T) {
  return 3;
}
FZ_DEV int fzb_6e62fc3e8ab0ad77_tile256(i64 t, i64* u, i64 dim_B, i64 dim_N, i64 dim_T) {
  if (t < 1) { *u = t; return 0; }
  t -= 1;
  if (t < 1) { *u = t; return 1; }
  t -= 1;
  if (t < 1) { *u = t; return 2; }
  t -= 1;
  *u = 0;
  return -1;
}
FZ_DEV i64 fzb_6e62fc3e8ab0ad77_col256(int seg, i64 u, int s, i64 dim_B, i64 dim_N, i64 dim_T) {
  switch (seg) {
    case 0: {
      const int q = s / 128, j = s % 128;
      if (q >= 2) return -1;
      const i64 beta = u * 128 + j;
      if (beta >= 16) return -1;
      const i64 offs[2] = {0, 4};
      return (((beta/4)*8) + (beta%4)) + offs[q];
    }
    case 1: {
      const int q = s / 128, j = s % 128;
      if (q >= 2) return -1;
      const i64 beta = u * 128 + j;
      if (beta >= 8) return -1;
      const i64 offs[2] = {0, 4};
      return (32 + (((beta/4)*8) + (beta%4))) + offs[q];
    }
    case 2: {
      const int q = s / 256, j = s % 256;
      if (q >= 1) return -1;
      const i64 beta = u * 256 + j;
      if (beta >= 16) return -1;
      const i64 offs[1] = {0};
      return (48 + beta) + offs[q];
    }
  }
  return -1;
}
FZ_DEV i64 fzb_6e62fc3e8ab0ad77_ntiles64(i64 dim_B, i64 dim_N, i64 dim_T) {
  return 3;
}
FZ_DEV int fzb_6e62fc3e8ab0ad77_tile64(i64 t, i64* u, i64 dim_B, i64 dim_N, i64 dim_T) {
  if (t < 1) { *u = t; return 0; }
  t -= 1;
  if (t < 1) { *u = t; return 1; }
  t -= 1;
  if (t < 1) { *u = t; return 2; }
  t -= 1;
  *u = 0;
  return -1;
}
FZ_DEV i64 fzb_6e62fc3e8ab0ad77_col64(int seg, i64 u, int s, i64 dim_B, i64 dim_N, i64 dim_T) {
  switch (seg) {
    case 0: {
      const int q = s / 32, j = s % 32;
      if (q >= 2) return -1;
      const i64 beta = u * 32 + j;
      if (beta >= 16) return -1;
      const i64 offs[2] = {0, 4};
      return (((beta/4)*8) + (beta%4)) + offs[q];
    }
    case 1: {
      const int q = s / 32, j = s % 32;
      if (q >= 2) return -1;
      const i64 beta = u * 32 + j;
      if (beta >= 8) return -1;
      const i64 offs[2] = {0, 4};
      return (32 + (((beta/4)*8) + (beta%4))) + offs[q];
    }
    case 2: {
      const int q = s / 64, j = s % 64;
      if (q >= 1) return -1;
      const i64 beta = u * 64 + j;
      if (beta >= 16) return -1;
      const i64 offs[1] = {0};
      return (48 + beta) + offs[q];
    }
  }
  return -1;
}
FZ_DEV void fzb_6e62fc3e8ab0ad77_epi0(const float* __restrict__ p0, const float* __restrict__ p1, const int* __restrict__ p2, const int* __restrict__ p3, const int* __restrict__ p4, float* __restrict__ p5, float* __restrict__ p6, i64 dim_B, i64 dim_N, i64 dim_T, const i64 ub, const i64 r, const i64 c0, const float* ev, const i64 nv) {
  const i64 oc0 = r;
  {
    const float t1 = fz_ld_i32(p2 + oc0);
    float rc2, rs3;
    fz_rope_cs(t1, fz_rope_40c3880000000000_8[((c0%8)%4)], &rc2, &rs3);
    const float t4 = ev[0] * rc2 + ((c0%8) < 4 ? -ev[1] : ev[1]) * rs3;
    fz_st_f32(p5 + (((oc0*32) + ((c0/8)*8)) + (c0%8)), t4);
  }
  {
    const float t5 = fz_ld_i32(p2 + oc0);
    float rc6, rs7;
    fz_rope_cs(t5, fz_rope_40c3880000000000_8[(((c0 + 4)%8)%4)], &rc6, &rs7);
    const float t8 = ev[1] * rc6 + (((c0 + 4)%8) < 4 ? -ev[0] : ev[0]) * rs7;
    fz_st_f32(p5 + (((oc0*32) + (((c0 + 4)/8)*8)) + ((c0 + 4)%8)), t8);
  }
}
FZ_DEV void fzb_6e62fc3e8ab0ad77_epi1(const float* __restrict__ p0, const float* __restrict__ p1, const int* __restrict__ p2, const int* __restrict__ p3, const int* __restrict__ p4, float* __restrict__ p5, float* __restrict__ p6, i64 dim_B, i64 dim_N, i64 dim_T, const i64 ub, const i64 r, const i64 c0, const float* ev, const i64 nv) {
  const i64 oc0 = r;
  {
    const float t9 = fz_ld_i32(p2 + oc0);
    float rc10, rs11;
    fz_rope_cs(t9, fz_rope_40c3880000000000_8[(((c0 - 32)%8)%4)], &rc10, &rs11);
    const float t12 = ev[0] * rc10 + (((c0 - 32)%8) < 4 ? -ev[1] : ev[1]) * rs11;
    const i64 sb13 = fz_packed_seq(p4, dim_B, oc0);
    fz_st_f32((p6 + fz_ragged_row(p3, sb13, ((c0 - 32)/8), ((fz_seqlen_ragged(p3, sb13) - fz_seqlen_ragged(p4, sb13)) + (oc0 - (i64)p4[sb13])), 0, dim_B, 2, 8)) + ((c0 - 32)%8), t12);
  }
  {
    const float t14 = fz_ld_i32(p2 + oc0);
    float rc15, rs16;
    fz_rope_cs(t14, fz_rope_40c3880000000000_8[((((c0 + 4) - 32)%8)%4)], &rc15, &rs16);
    const float t17 = ev[1] * rc15 + ((((c0 + 4) - 32)%8) < 4 ? -ev[0] : ev[0]) * rs16;
    const i64 sb18 = fz_packed_seq(p4, dim_B, oc0);
    fz_st_f32((p6 + fz_ragged_row(p3, sb18, (((c0 + 4) - 32)/8), ((fz_seqlen_ragged(p3, sb18) - fz_seqlen_ragged(p4, sb18)) + (oc0 - (i64)p4[sb18])), 0, dim_B, 2, 8)) + (((c0 + 4) - 32)%8), t17);
  }
}
FZ_DEV void fzb_6e62fc3e8ab0ad77_epi2(const float* __restrict__ p0, const float* __restrict__ p1, const int* __restrict__ p2, const int* __restrict__ p3, const int* __restrict__ p4, float* __restrict__ p5, float* __restrict__ p6, i64 dim_B, i64 dim_N, i64 dim_T, const i64 ub, const i64 r, const i64 c0, const float* ev, const i64 nv) {
  const i64 oc0 = r;
  {
    const i64 sb19 = fz_packed_seq(p4, dim_B, oc0);
    fz_st_f32((p6 + fz_ragged_row(p3, sb19, ((c0 - 48)/8), ((fz_seqlen_ragged(p3, sb19) - fz_seqlen_ragged(p4, sb19)) + (oc0 - (i64)p4[sb19])), 1, dim_B, 2, 8)) + ((c0 - 48)%8), ev[0]);
  }
}
struct fzb_6e62fc3e8ab0ad77_ctx {
  const float* p0;
  const float* p1;
  const int* p2;
  const int* p3;
  const int* p4;
  float* p5;
  float* p6;
  i64 dim_B;
  i64 dim_N;
  i64 dim_T;
  using AT = float;
  using BT = float;
  FZ_DEV float lda(const AT* p) { return fz_ld_f32(p); }
  FZ_DEV void lda8(float* v, const AT* p) { fz_ld8_f32(v, p); }
  FZ_DEV float ldb(const BT* p) { return fz_ld_f32(p); }
  FZ_DEV void ldb8(float* v, const BT* p) { fz_ld8_f32(v, p); }
  static constexpr bool AK = true, BK = false, BN = true, RAW16 = false, BIG = false;
  static constexpr int AVEC = 16, BVEC = 16, TN = 256, STAGED = 4096;
  // Element (r, k) of unit ub's left operand.
  __device__ __forceinline__ const AT* a(i64 ub, i64 r, i64 k) const {
    const i64 ar0 = r;
    return p0 + ((ar0*32) + k);
  }
  // Element (k, n) of unit ub's right operand.
  __device__ __forceinline__ const BT* b(i64 ub, i64 k, i64 n) const {
    return p1 + ((k*64) + n);
  }
};
FZ_DEV void fzb_6e62fc3e8ab0ad77(const float* __restrict__ p0, const float* __restrict__ p1, const int* __restrict__ p2, const int* __restrict__ p3, const int* __restrict__ p4, float* __restrict__ p5, float* __restrict__ p6, i64 dim_B, i64 dim_N, i64 dim_T) {
  __shared__ __align__(128) float smem[9216];
  __shared__ i64 scol[256];
  __shared__ int svec[32];
  float* As = smem; float* red = smem;
  const fzb_6e62fc3e8ab0ad77_ctx cx = {p0, p1, p2, p3, p4, p5, p6, dim_B, dim_N, dim_T};
  float* res = smem + 4096;
  const int nsplit = 1, sp = 0;
  const i64 nblk = (i64)gridDim.x * gridDim.y * gridDim.z, bid = blockIdx.x + (i64)gridDim.x * (blockIdx.y + (i64)gridDim.y * blockIdx.z);
  bool waited = false;
  const i64 UB = 1, MR_ = dim_N;
  const i64 ntile = fzb_6e62fc3e8ab0ad77_ntiles256(dim_B, dim_N, dim_T);
  const i64 nrc = (MR_ + 7) / 8;
  for (i64 item = bid; item < UB * nrc * ntile; item += nblk) {
    const i64 t = item % ntile, rest = item / ntile, rc = rest % nrc, ub = rest / nrc;
    const i64 r0 = rc * 8;
    const int mr = (int)fz_min64(8, MR_ - r0);
    i64 u;
    const int seg = fzb_6e62fc3e8ab0ad77_tile256(t, &u, dim_B, dim_N, dim_T);
    const i64 kv = 32, nv = 64;
    __syncthreads();
    for (int s = threadIdx.x; s < 256; s += blockDim.x) {
      const i64 c = fzb_6e62fc3e8ab0ad77_col256(seg, u, s, dim_B, dim_N, dim_T);
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
      fz_warm(fz_rope_40c3880000000000_8);
      fz_grid_sync();
      waited = true;
    }
    for (int p = 0; p < mr; p += 8) {
      const int mp = mr - p < 8 ? mr - p : 8;
      switch (mp <= 1 ? 1 : mp <= 2 ? 2 : mp <= 4 ? 4 : 8) {
        case 1: fz_gemv_tile<fzb_6e62fc3e8ab0ad77_ctx, 1>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * 256); break;
        case 2: fz_gemv_tile<fzb_6e62fc3e8ab0ad77_ctx, 2>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * 256); break;
        case 4: fz_gemv_tile<fzb_6e62fc3e8ab0ad77_ctx, 4>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * 256); break;
        case 8: fz_gemv_tile<fzb_6e62fc3e8ab0ad77_ctx, 8>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * 256); break;
      }
    }
    switch (seg) {
      case 0: {
        const int lo = 0, hi = mr * 128;
        #pragma unroll 4
        for (int e = lo + threadIdx.x; e < hi; e += blockDim.x) {
          const int m = e / 128, j = e % 128;
          const i64 beta = u * 128 + j;
          if (beta >= 16) continue;
          const i64 c0 = (((beta/4)*8) + (beta%4));
          float ev[2];
          ev[0] = res[m * 256 + 0 + j];
          ev[1] = res[m * 256 + 128 + j];
          fzb_6e62fc3e8ab0ad77_epi0(p0, p1, p2, p3, p4, p5, p6, dim_B, dim_N, dim_T, ub, r0 + m, c0, ev, nv);
        }
        break;
      }
      case 1: {
        const int lo = 0, hi = mr * 128;
        #pragma unroll 4
        for (int e = lo + threadIdx.x; e < hi; e += blockDim.x) {
          const int m = e / 128, j = e % 128;
          const i64 beta = u * 128 + j;
          if (beta >= 8) continue;
          const i64 c0 = (32 + (((beta/4)*8) + (beta%4)));
          float ev[2];
          ev[0] = res[m * 256 + 0 + j];
          ev[1] = res[m * 256 + 128 + j];
          fzb_6e62fc3e8ab0ad77_epi1(p0, p1, p2, p3, p4, p5, p6, dim_B, dim_N, dim_T, ub, r0 + m, c0, ev, nv);
        }
        break;
      }
      case 2: {
        const int lo = 0, hi = mr * 256;
        #pragma unroll 4
        for (int e = lo + threadIdx.x; e < hi; e += blockDim.x) {
          const int m = e / 256, j = e % 256;
          const i64 beta = u * 256 + j;
          if (beta >= 16) continue;
          const i64 c0 = (48 + beta);
          float ev[1];
          ev[0] = res[m * 256 + 0 + j];
          fzb_6e62fc3e8ab0ad77_epi2(p0, p1, p2, p3, p4, p5, p6, dim_B, dim_N, dim_T, ub, r0 + m, c0, ev, nv);
        }
        break;
      }
    }
  }
  if (!waited) fz_grid_sync();
}

extern "C" __global__ void __launch_bounds__(256, 1) k01_gemm_matmul_rope_append(const float* __restrict__ v19_h, const float* __restrict__ v6_wqkv, const int* __restrict__ v2_pos, const int* __restrict__ v4_kv_indptr, const int* __restrict__ v3_qo_indptr, float* __restrict__ v25, float* __restrict__ v11_kv, i64 dim_B, i64 dim_N, i64 dim_T) { fzb_6e62fc3e8ab0ad77(v19_h, v6_wqkv, v2_pos, v4_kv_indptr, v3_qo_indptr, v25, v11_kv, dim_B, dim_N, dim_T); }
