// body of k03_gemm_matmul_silu_mul_mean_etc
FZ_DEV i64 fzb_9733cad2bcc75327_ntiles256(i64 dim_B, i64 dim_S, i64 dim_T) {
  return 112;
}
FZ_DEV int fzb_9733cad2bcc75327_tile256(i64 t, i64* u, i64 dim_B, i64 dim_S, i64 dim_T) {
  if (t < 112) { *u = t; return 0; }
  t -= 112;
  *u = 0;
  return -1;
}
FZ_DEV i64 fzb_9733cad2bcc75327_col256(int seg, i64 u, int s, i64 dim_B, i64 dim_S, i64 dim_T) {
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
FZ_DEV i64 fzb_9733cad2bcc75327_ntiles64(i64 dim_B, i64 dim_S, i64 dim_T) {
  return 448;
}
FZ_DEV int fzb_9733cad2bcc75327_tile64(i64 t, i64* u, i64 dim_B, i64 dim_S, i64 dim_T) {
  if (t < 448) { *u = t; return 0; }
  t -= 448;
  *u = 0;
  return -1;
}
FZ_DEV i64 fzb_9733cad2bcc75327_col64(int seg, i64 u, int s, i64 dim_B, i64 dim_S, i64 dim_T) {
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
FZ_DEV void fzb_9733cad2bcc75327_epi0(const u16* __restrict__ p0, const u16* __restrict__ p1, const u16* __restrict__ p2, u16* __restrict__ p3, i64 dim_B, i64 dim_S, i64 dim_T, const i64 ub, const i64 r, const i64 c0, const float* ev, const i64 nv) {
  const i64 oc0 = (r/dim_S);
  const i64 oc1 = (r%dim_S);
  {
    const float t1 = fz_silu(ev[0]);
    const float t2 = t1 * ev[1];
    fz_st_bf16(p3 + (((oc0*(14336*dim_S)) + (oc1*14336)) + c0), t2);
  }
}
struct fzb_9733cad2bcc75327_ctx {
  const u16* p0;
  const u16* p1;
  const u16* p2;
  u16* p3;
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
  static constexpr bool PRO = true;
  template <int MR, int KC>
  __device__ __forceinline__ void stage(i64 ub, i64 r0, int mr, i64 kc, int kl, float* As, bool lead) const {
    for (int m = 0; m < mr; m++) {
      const i64 pr = r0 + m;
      const i64 pc0 = (pr/dim_S);
      const i64 pc1 = (pr%dim_S);
      const i64 nvr3 = (fz_aligned(p0 + (((pc0*(4096*dim_S)) + (pc1*4096))), 16) && fz_aligned(p1, 16)) ? 4096 : 0;
      uint4 vr5[2];
      uint4 vr14[2];

      float acc4 = 0.f;
      #pragma unroll
      for (int it = 0; it < 2; it++) {
        const i64 j0 = (i64)threadIdx.x * 8 + it * 2048;
        if (j0 < nvr3) {
          vr5[it] = *(const uint4*)(p0 + (((pc0*(4096*dim_S)) + (pc1*4096)) + j0));
          float vu6[8];
          fz_unpack_bf16(vu6, vr5[it]);
          #pragma unroll
          for (int u = 0; u < 8; u++) {
            const i64 jj = j0 + u;
            const float t7 = vu6[u] * vu6[u];
            acc4 += t7;
          }
        }
      }
      for (i64 jj = nvr3 + threadIdx.x; jj < 4096; jj += 256) {
        const float t8 = fz_ld_bf16(p0 + (((pc0*(4096*dim_S)) + (pc1*4096)) + jj));
        const float t9 = t8 * t8;
        acc4 += t9;
      }
      acc4 = fz_block_sum(acc4);
      acc4 = 4096 > 0 ? acc4 / (float)4096 : 0.f;
      const float t11 = acc4 + 9.99999975e-06f;
      const float t12 = rsqrtf(t11);
      #pragma unroll
      for (int it = 0; it < 2; it++) {
        const i64 j0 = (i64)threadIdx.x * 8 + it * 2048;
        if (j0 < nvr3) {
          vr14[it] = *(const uint4*)(p1 + j0);
          float vu10[8];
          fz_unpack_bf16(vu10, vr5[it]);
          float vu15[8];
          fz_unpack_bf16(vu15, vr14[it]);
          #pragma unroll
          for (int u = 0; u < 8; u++) {
            const i64 jj = j0 + u;
            const float t13 = vu10[u] * t12;
            const float t16 = t13 * vu15[u];
            if (jj >= kc && jj < kc + kl) As[m * KC + (int)(jj - kc)] = fz_round_bf16(t16);
          }
        }
      }
      for (i64 jj = nvr3 + threadIdx.x; jj < 4096; jj += 256) {
        const float t17 = fz_ld_bf16(p0 + (((pc0*(4096*dim_S)) + (pc1*4096)) + jj));
        const float t18 = t17 * t12;
        const float t19 = fz_ld_bf16(p1 + jj);
        const float t20 = t18 * t19;
        if (jj >= kc && jj < kc + kl) As[m * KC + (int)(jj - kc)] = fz_round_bf16(t20);
      }
    }
    for (int e = threadIdx.x; e < MR * KC; e += blockDim.x) {
      if (e / KC >= mr || e % KC >= kl) As[e] = 0.f;
    }
  }
  // Element (k, n) of unit ub's right operand.
  __device__ __forceinline__ const BT* b(i64 ub, i64 k, i64 n) const {
    return p2 + ((k*28672) + n);
  }
};
FZ_DEV void fzb_9733cad2bcc75327(const u16* __restrict__ p0, const u16* __restrict__ p1, const u16* __restrict__ p2, u16* __restrict__ p3, i64 dim_B, i64 dim_S, i64 dim_T) {
  __shared__ __align__(128) float smem[9216];
  __shared__ i64 scol[256];
  __shared__ int svec[32];
  float* As = smem; float* red = smem;
  const fzb_9733cad2bcc75327_ctx cx = {p0, p1, p2, p3, dim_B, dim_S, dim_T};
  float* res = smem + 4096;
  const int nsplit = 1, sp = 0;
  const i64 nblk = (i64)gridDim.x * gridDim.y * gridDim.z, bid = blockIdx.x + (i64)gridDim.x * (blockIdx.y + (i64)gridDim.y * blockIdx.z);
  bool waited = false;
  const i64 UB = 1, MR_ = (dim_B*dim_S);
  const i64 ntile = fzb_9733cad2bcc75327_ntiles256(dim_B, dim_S, dim_T);
  const i64 nrc = (MR_ + 7) / 8;
  for (i64 item = bid; item < UB * nrc * ntile; item += nblk) {
    const i64 t = item % ntile, rest = item / ntile, rc = rest % nrc, ub = rest / nrc;
    const i64 r0 = rc * 8;
    const int mr = (int)fz_min64(8, MR_ - r0);
    i64 u;
    const int seg = fzb_9733cad2bcc75327_tile256(t, &u, dim_B, dim_S, dim_T);
    const i64 kv = 4096, nv = 28672;
    __syncthreads();
    for (int s = threadIdx.x; s < 256; s += blockDim.x) {
      const i64 c = fzb_9733cad2bcc75327_col256(seg, u, s, dim_B, dim_S, dim_T);
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
      for (i64 o = (i64)threadIdx.x * 128; o < 8192; o += (i64)blockDim.x * 128) fz_prefetch_l2((const char*)p1 + o);
      fz_grid_sync();
      waited = true;
    }
    for (int p = 0; p < mr; p += 8) {
      const int mp = mr - p < 8 ? mr - p : 8;
      switch (mp <= 1 ? 1 : mp <= 2 ? 2 : mp <= 4 ? 4 : 8) {
        case 1: fz_gemv_tile<fzb_9733cad2bcc75327_ctx, 1>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * 256, t == 0 && sp == 0); break;
        case 2: fz_gemv_tile<fzb_9733cad2bcc75327_ctx, 2>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * 256, t == 0 && sp == 0); break;
        case 4: fz_gemv_tile<fzb_9733cad2bcc75327_ctx, 4>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * 256, t == 0 && sp == 0); break;
        case 8: fz_gemv_tile<fzb_9733cad2bcc75327_ctx, 8>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * 256, t == 0 && sp == 0); break;
      }
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
          fzb_9733cad2bcc75327_epi0(p0, p1, p2, p3, dim_B, dim_S, dim_T, ub, r0 + m, c0, ev, nv);
        }
        break;
      }
    }
  }
  if (!waited) fz_grid_sync();
}

extern "C" __global__ void __launch_bounds__(256, 1) k03_gemm_matmul_silu_mul_mean_etc(const u16* __restrict__ v41_h1, const u16* __restrict__ v6_wn2, const u16* __restrict__ v7_wgu, u16* __restrict__ v53, i64 dim_B, i64 dim_S, i64 dim_T) { fzb_9733cad2bcc75327(v41_h1, v6_wn2, v7_wgu, v53, dim_B, dim_S, dim_T); }
