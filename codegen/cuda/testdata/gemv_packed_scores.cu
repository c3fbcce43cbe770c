// body of k10_gemm_matmul
FZ_DEV i64 fzb_f266128d5738b731_ntiles32(i64 dim_B, i64 dim_N, i64 dim_T) {
  return (((dim_N + dim_T) + 31)/32);
}
FZ_DEV int fzb_f266128d5738b731_tile32(i64 t, i64* u, i64 dim_B, i64 dim_N, i64 dim_T) {
  if (t < (((dim_N + dim_T) + 31)/32)) { *u = t; return 0; }
  t -= (((dim_N + dim_T) + 31)/32);
  *u = 0;
  return -1;
}
FZ_DEV i64 fzb_f266128d5738b731_col32(int seg, i64 u, int s, i64 dim_B, i64 dim_N, i64 dim_T) {
  switch (seg) {
    case 0: {
      const int q = s / 32, j = s % 32;
      if (q >= 1) return -1;
      const i64 beta = u * 32 + j;
      if (beta >= (dim_N + dim_T)) return -1;
      const i64 offs[1] = {0};
      return beta + offs[q];
    }
  }
  return -1;
}
FZ_DEV i64 fzb_f266128d5738b731_ntiles64(i64 dim_B, i64 dim_N, i64 dim_T) {
  return (((dim_N + dim_T) + 63)/64);
}
FZ_DEV int fzb_f266128d5738b731_tile64(i64 t, i64* u, i64 dim_B, i64 dim_N, i64 dim_T) {
  if (t < (((dim_N + dim_T) + 63)/64)) { *u = t; return 0; }
  t -= (((dim_N + dim_T) + 63)/64);
  *u = 0;
  return -1;
}
FZ_DEV i64 fzb_f266128d5738b731_col64(int seg, i64 u, int s, i64 dim_B, i64 dim_N, i64 dim_T) {
  switch (seg) {
    case 0: {
      const int q = s / 64, j = s % 64;
      if (q >= 1) return -1;
      const i64 beta = u * 64 + j;
      if (beta >= (dim_N + dim_T)) return -1;
      const i64 offs[1] = {0};
      return beta + offs[q];
    }
  }
  return -1;
}
FZ_DEV void fzb_f266128d5738b731_epi0(const float* __restrict__ p0, const float* __restrict__ p1, const int* __restrict__ p2, const int* __restrict__ p3, float* __restrict__ p4, i64 dim_B, i64 dim_N, i64 dim_T, const i64 ub, const i64 r, const i64 c0, const float* ev, const i64 nv) {
  const i64 oc0 = (((ub/dim_N)*2) + r);
  const i64 oc1 = (ub%dim_N);
  {
    fz_st_f32(p4 + (((oc0*(dim_N*dim_N + dim_N*dim_T)) + (oc1*(dim_N + dim_T))) + c0), (c0 < nv ? ev[0] : 0.f));
  }
}
struct fzb_f266128d5738b731_ctx {
  const float* p0;
  const float* p1;
  const int* p2;
  const int* p3;
  float* p4;
  i64 dim_B;
  i64 dim_N;
  i64 dim_T;
  using AT = float;
  using BT = float;
  FZ_DEV float lda(const AT* p) { return fz_ld_f32(p); }
  FZ_DEV void lda8(float* v, const AT* p) { fz_ld8_f32(v, p); }
  FZ_DEV float ldb(const BT* p) { return fz_ld_f32(p); }
  FZ_DEV void ldb8(float* v, const BT* p) { fz_ld8_f32(v, p); }
  static constexpr bool AK = true, BK = true, BN = false, RAW16 = false, BIG = false;
  static constexpr int AVEC = 16, BVEC = 16, TN = 32, STAGED = 4096;
  // Element (r, k) of unit ub's left operand.
  __device__ __forceinline__ const AT* a(i64 ub, i64 r, i64 k) const {
    const i64 ar0 = (((ub/dim_N)*2) + r);
    const i64 ar1 = (ub%dim_N);
    return p0 + (((ar0*8) + (ar1*32)) + k);
  }
  // Element (k, n) of unit ub's right operand.
  __device__ __forceinline__ const BT* b(i64 ub, i64 k, i64 n) const {
    const i64 ub0 = ((ub/dim_N)*2);
    const i64 ub1 = (ub%dim_N);
    return p1 + (fz_ragged_row(p3, fz_packed_seq(p2, dim_B, ub1), (ub0/2), n, 0, dim_B, 2, 8) + k);
  }
};
FZ_DEV void fzb_f266128d5738b731(const float* __restrict__ p0, const float* __restrict__ p1, const int* __restrict__ p2, const int* __restrict__ p3, float* __restrict__ p4, i64 dim_B, i64 dim_N, i64 dim_T) {
  __shared__ __align__(128) float smem[9216];
  __shared__ i64 scol[64];
  __shared__ int svec[4];
  float* As = smem; float* red = smem;
  const fzb_f266128d5738b731_ctx cx = {p0, p1, p2, p3, p4, dim_B, dim_N, dim_T};
  float* res = smem + 4096;
  const int nsplit = 1, sp = 0;
  const i64 nblk = (i64)gridDim.x * gridDim.y * gridDim.z, bid = blockIdx.x + (i64)gridDim.x * (blockIdx.y + (i64)gridDim.y * blockIdx.z);
  bool waited = false;
  const i64 UB = (2*dim_N), MR_ = 2;
  const i64 ntile = fzb_f266128d5738b731_ntiles32(dim_B, dim_N, dim_T);
  const i64 nrc = (MR_ + 7) / 8;
  for (i64 item = bid; item < UB * nrc * ntile; item += nblk) {
    const i64 t = item % ntile, rest = item / ntile, rc = rest % nrc, ub = rest / nrc;
    const i64 r0 = rc * 8;
    const int mr = (int)fz_min64(8, MR_ - r0);
    i64 u;
    const int seg = fzb_f266128d5738b731_tile32(t, &u, dim_B, dim_N, dim_T);
    const i64 ub0 = ((ub/dim_N)*2);
    const i64 ub1 = (ub%dim_N);
    const i64 kv = 8, nv = fz_min64(fz_seqlen_ragged(p3, fz_packed_seq(p2, dim_B, ub1)), (dim_N + dim_T));
    __syncthreads();
    for (int s = threadIdx.x; s < 32; s += blockDim.x) {
      const i64 c = fzb_f266128d5738b731_col32(seg, u, s, dim_B, dim_N, dim_T);
      scol[s] = c < nv ? c : -1;
    }
    __syncthreads();
    if (threadIdx.x < 4) {
      bool ok = true;
      for (int i = 0; i < 8; i++) ok = ok && scol[threadIdx.x * 8 + i] >= 0 && scol[threadIdx.x * 8 + i] == scol[threadIdx.x * 8] + i;
      svec[threadIdx.x] = ok && (scol[threadIdx.x * 8] & 7) == 0;
    }
    __syncthreads();
    const i64 kper = fz_gemv_kper(kv, nsplit);
    const i64 k0 = fz_min64(kv, sp * kper), k1 = fz_min64(kv, k0 + kper);
    if (!waited) {
      fz_gemv_prefetch(cx, ub, k0, fz_min64(k1, k0 + 128), scol);
      fz_grid_sync();
      waited = true;
    }
    for (int p = 0; p < mr; p += 8) {
      const int mp = mr - p < 8 ? mr - p : 8;
      switch (mp <= 1 ? 1 : mp <= 2 ? 2 : mp <= 4 ? 4 : 8) {
        case 1: fz_gemv_tile<fzb_f266128d5738b731_ctx, 1>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * 32); break;
        case 2: fz_gemv_tile<fzb_f266128d5738b731_ctx, 2>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * 32); break;
        case 4: fz_gemv_tile<fzb_f266128d5738b731_ctx, 4>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * 32); break;
        case 8: fz_gemv_tile<fzb_f266128d5738b731_ctx, 8>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * 32); break;
      }
    }
    switch (seg) {
      case 0: {
        const int lo = 0, hi = mr * 32;
        #pragma unroll 4
        for (int e = lo + threadIdx.x; e < hi; e += blockDim.x) {
          const int m = e / 32, j = e % 32;
          const i64 beta = u * 32 + j;
          if (beta >= (dim_N + dim_T)) continue;
          const i64 c0 = beta;
          float ev[1];
          ev[0] = res[m * 32 + 0 + j];
          fzb_f266128d5738b731_epi0(p0, p1, p2, p3, p4, dim_B, dim_N, dim_T, ub, r0 + m, c0, ev, nv);
        }
        break;
      }
    }
  }
  if (!waited) fz_grid_sync();
}

extern "C" __global__ void __launch_bounds__(256, 1) k10_gemm_matmul(const float* __restrict__ v25, const float* __restrict__ v11_kv, const int* __restrict__ v3_qo_indptr, const int* __restrict__ v4_kv_indptr, float* __restrict__ v35, i64 dim_B, i64 dim_N, i64 dim_T) { fzb_f266128d5738b731(v25, v11_kv, v3_qo_indptr, v4_kv_indptr, v35, dim_B, dim_N, dim_T); }
