// body of k05_gemm_matmul_silu_mul
FZ_DEV i64 fzb_cf8c85ab136b1896_ntiles256(i64 dim_B, i64 dim_S, i64 dim_T) {
  return 112;
}
FZ_DEV int fzb_cf8c85ab136b1896_tile256(i64 t, i64* u, i64 dim_B, i64 dim_S, i64 dim_T) {
  if (t < 112) { *u = t; return 0; }
  t -= 112;
  *u = 0;
  return -1;
}
FZ_DEV i64 fzb_cf8c85ab136b1896_col256(int seg, i64 u, int s, i64 dim_B, i64 dim_S, i64 dim_T) {
  switch (seg) {
    case 0: {
      const int q = s / 128, j = s % 128;
      if (q >= 2) return -1;
      const i64 beta = u * 128 + j;
      if (beta >= 14336) return -1;
      const i64 offs[2] = {0, 14336};
      return beta + offs[q];
    }
  }
  return -1;
}
FZ_DEV i64 fzb_cf8c85ab136b1896_ntiles64(i64 dim_B, i64 dim_S, i64 dim_T) {
  return 448;
}
FZ_DEV int fzb_cf8c85ab136b1896_tile64(i64 t, i64* u, i64 dim_B, i64 dim_S, i64 dim_T) {
  if (t < 448) { *u = t; return 0; }
  t -= 448;
  *u = 0;
  return -1;
}
FZ_DEV i64 fzb_cf8c85ab136b1896_col64(int seg, i64 u, int s, i64 dim_B, i64 dim_S, i64 dim_T) {
  switch (seg) {
    case 0: {
      const int q = s / 32, j = s % 32;
      if (q >= 2) return -1;
      const i64 beta = u * 32 + j;
      if (beta >= 14336) return -1;
      const i64 offs[2] = {0, 14336};
      return beta + offs[q];
    }
  }
  return -1;
}
FZ_DEV void fzb_cf8c85ab136b1896_epi0(const u16* __restrict__ p0, const u16* __restrict__ p1, u16* __restrict__ p2, i64 dim_B, i64 dim_S, i64 dim_T, const i64 ub, const i64 r, const i64 c0, const float* ev, const i64 nv) {
  const i64 oc0 = (r/dim_S);
  const i64 oc1 = (r%dim_S);
  {
    const float t1 = fz_silu(ev[0]);
    const float t2 = t1 * ev[1];
    fz_st_bf16(p2 + (((oc0*(14336*dim_S)) + (oc1*14336)) + c0), t2);
  }
}
struct fzb_cf8c85ab136b1896_ctx {
  const u16* p0;
  const u16* p1;
  u16* p2;
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
    return p1 + ((k*28672) + n);
  }
  static constexpr bool BF16 = true;
  static constexpr int GV_TN = 256, GV_ROWS = 32, GV_STAGES = 7, GV_STAGE_BYTES = 20480;
  static constexpr bool BSIMPLE = true;
  // The weight's K stride.
  __device__ __forceinline__ i64 bks() const { return 28672; }
  FZ_DEV int nslot(int seg, int wn, int nt) {
    switch (seg) {
      case 0: return (nt / 2) * 32 + wn * 16 + (nt % 2) * 8;
    }
    return 0;
  }
};
FZ_DEV void fzb_cf8c85ab136b1896_mma(const u16* __restrict__ p0, const u16* __restrict__ p1, u16* __restrict__ p2, i64 dim_B, i64 dim_S, i64 dim_T, const i64 bid, const i64 nblk, u16* smem, const u16** sArow, const u16** sBrow, i64* scol) {
  const fzb_cf8c85ab136b1896_ctx cx = {p0, p1, p2, dim_B, dim_S, dim_T};
  const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
  const int wm = (wid >> 1) & 3, wn = wid & 1;
  const i64 UB = 1, MR_ = (dim_B*dim_S);
  const i64 ntile = fzb_cf8c85ab136b1896_ntiles64(dim_B, dim_S, dim_T);
  const i64 nrt = (MR_ + 127) / 128;
  for (i64 item = bid; item < UB * nrt * ntile; item += nblk) {
    const i64 t = item % ntile, rest = item / ntile, rt = rest % nrt, ub = rest / nrt;
    const i64 r0 = rt * 128;
    i64 u;
    const int seg = fzb_cf8c85ab136b1896_tile64(t, &u, dim_B, dim_S, dim_T);
    const i64 kv = 4096, nv = 28672;
    __syncthreads();
    for (int s = tid; s < 64; s += blockDim.x) {
      const i64 c = fzb_cf8c85ab136b1896_col64(seg, u, s, dim_B, dim_S, dim_T);
      scol[s] = c < nv ? c : -1;
    }
    // Row pointers of A (and of B^T for a K-contiguous B).
    for (int i = tid; i < 128; i += blockDim.x) {
      const i64 r = r0 + i;
      sArow[i] = r < MR_ ? (const u16*)cx.a(ub, r, 0) : 0;
    }
    __syncthreads();
    float acc[2][4][4];
    fz_mma_mainloop<fzb_cf8c85ab136b1896_ctx, true, 128, 64, 32, 3>(cx, ub, kv, seg, smem, sArow, sBrow, scol, acc);
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
                  if (beta >= 14336) continue;
                  const i64 c0 = beta;
                  float ev[2];
                  ev[0] = acc[mt][0 + jb][h * 2 + c];
                  ev[1] = acc[mt][2 + jb][h * 2 + c];
                  fzb_cf8c85ab136b1896_epi0(p0, p1, p2, dim_B, dim_S, dim_T, ub, r, c0, ev, nv);
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
FZ_DEV void fzb_cf8c85ab136b1896(const u16* __restrict__ p0, const u16* __restrict__ p1, u16* __restrict__ p2, i64 dim_B, i64 dim_S, i64 dim_T) {
  __shared__ __align__(128) float smem[9216];
  __shared__ i64 scol[256];
  __shared__ int svec[32];
  float* As = smem; float* red = smem;
  const fzb_cf8c85ab136b1896_ctx cx = {p0, p1, p2, dim_B, dim_S, dim_T};
  extern __shared__ __align__(128) unsigned char fz_gemv_dsm[];
  unsigned char* ring = fz_gemv_dsm + ((1024u - (fz_smem_addr(fz_gemv_dsm) & 1023u)) & 1023u);
  float* res = (dim_B*dim_S) > 1 ? (float*)ring : smem + 4096;
  const int nsplit = 1, sp = 0;
  const i64 nblk = (i64)gridDim.x * gridDim.y * gridDim.z, bid = blockIdx.x + (i64)gridDim.x * (blockIdx.y + (i64)gridDim.y * blockIdx.z);
  if ((dim_B*dim_S) > 64 && fz_aligned(p0, 16) && fz_aligned(p1, 16) && fz_aligned(p0 + 4096, 16) && fz_aligned(p1 + 28672, 16)) {
    __shared__ const u16* sArow[128];
    __shared__ const u16* sBrow[64];
    fz_grid_sync();
    if (sp == 0) fzb_cf8c85ab136b1896_mma(p0, p1, p2, dim_B, dim_S, dim_T, bid, nblk, (u16*)smem, sArow, sBrow, scol);
    return;
  }
  bool waited = false;
  const i64 UB = 1, MR_ = (dim_B*dim_S);
  const i64 ntile = fzb_cf8c85ab136b1896_ntiles256(dim_B, dim_S, dim_T);
  const i64 nrc = (MR_ + 63) / 64;
  for (i64 item = bid; item < UB * nrc * ntile; item += nblk) {
    const i64 t = item % ntile, rest = item / ntile, rc = rest % nrc, ub = rest / nrc;
    const i64 r0 = rc * 64;
    const int mr = (int)fz_min64(64, MR_ - r0);
    i64 u;
    const int seg = fzb_cf8c85ab136b1896_tile256(t, &u, dim_B, dim_S, dim_T);
    const i64 kv = 4096, nv = 28672;
    __syncthreads();
    for (int s = threadIdx.x; s < 256; s += blockDim.x) {
      const i64 c = fzb_cf8c85ab136b1896_col256(seg, u, s, dim_B, dim_S, dim_T);
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
      fz_grid_sync();
      waited = true;
    }
    const bool tc = mr > 1 && fz_gemv_tc_ok(cx, ub, r0, mr, scol, svec);
    if (tc) {
      if (mr <= 8) fz_gemv_wg_tile<fzb_cf8c85ab136b1896_ctx, 1>(cx, ub, r0, mr, k0, k1, scol, ring, res);
      else if (mr <= 16) fz_gemv_wg_tile<fzb_cf8c85ab136b1896_ctx, 2>(cx, ub, r0, mr, k0, k1, scol, ring, res);
      else if (mr <= 32) fz_gemv_wg_tile<fzb_cf8c85ab136b1896_ctx, 4>(cx, ub, r0, mr, k0, k1, scol, ring, res);
      else fz_gemv_wg_tile<fzb_cf8c85ab136b1896_ctx, 8>(cx, ub, r0, mr, k0, k1, scol, ring, res);
    }
    else
    for (int p = 0; p < mr; p += 1) {
      fz_gemv_tile<fzb_cf8c85ab136b1896_ctx, 1>(cx, ub, r0 + p, 1, k0, k1, scol, svec, As, red, res + p * 256);
    }
    switch (seg) {
      case 0: {
        const int lo = 0, hi = mr * 128;
        #pragma unroll 4
        for (int e = lo + threadIdx.x; e < hi; e += blockDim.x) {
          const int m = e / 128, j = e % 128;
          const i64 beta = u * 128 + j;
          if (beta >= 14336) continue;
          const i64 c0 = beta;
          float ev[2];
          ev[0] = res[m * 256 + 0 + j];
          ev[1] = res[m * 256 + 128 + j];
          fzb_cf8c85ab136b1896_epi0(p0, p1, p2, dim_B, dim_S, dim_T, ub, r0 + m, c0, ev, nv);
        }
        break;
      }
    }
  }
  if (!waited) fz_grid_sync();
}

extern "C" __global__ void __launch_bounds__(256, 1) k05_gemm_matmul_silu_mul(const u16* __restrict__ v48, const u16* __restrict__ v7_wgu, u16* __restrict__ v53, i64 dim_B, i64 dim_S, i64 dim_T) { fzb_cf8c85ab136b1896(v48, v7_wgu, v53, dim_B, dim_S, dim_T); }
