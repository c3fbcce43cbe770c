// body of k06_row_topk
FZ_DEV void fzb_13bb3887c07482d0(const u16* __restrict__ p0, u16* __restrict__ p1, i64 dim_B, i64 dim_S, i64 dim_T) {
  const i64 rows = (dim_B*dim_S);
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const i64 ri0 = (row/dim_S);
    const i64 ri1 = (row%dim_S);
    const i64 nvr1 = (fz_aligned(p0 + (((ri0*(8*dim_S)) + (ri1*8))), 16) && fz_aligned(p1 + (((ri0*(8*dim_S)) + (ri1*8))), 16)) ? 8 : 0;
    uint4 vr4[1];

    __shared__ i64 sel[2];
    for (int r = 0; r < 2; r++) {
      float bv2 = -FZ_INF; i64 bi3 = 0x7fffffffffffffffLL;
      #pragma unroll
      for (int it = 0; it < 1; it++) {
        const i64 j0 = (i64)threadIdx.x * 8 + it * 2048;
        if (j0 < nvr1) {
          vr4[it] = *(const uint4*)(p0 + (((ri0*(8*dim_S)) + (ri1*8)) + j0));
          float vu5[8];
          fz_unpack_bf16(vu5, vr4[it]);
          #pragma unroll
          for (int u = 0; u < 8; u++) {
            const i64 jj = j0 + u;
            bool taken = false;
            for (int q = 0; q < r; q++) taken |= sel[q] == jj;
            if (!taken && fz_better(vu5[u], jj, bv2, bi3)) { bv2 = vu5[u]; bi3 = jj; }
          }
        }
      }
      for (i64 jj = nvr1 + threadIdx.x; jj < 8; jj += 256) {
        const float t6 = fz_ld_bf16(p0 + (((ri0*(8*dim_S)) + (ri1*8)) + jj));
        bool taken = false;
        for (int q = 0; q < r; q++) taken |= sel[q] == jj;
        if (!taken && fz_better(t6, jj, bv2, bi3)) { bv2 = t6; bi3 = jj; }
      }
      fz_block_argmax(bv2, bi3);
      if (threadIdx.x == 0) sel[r] = bv2 == -FZ_INF && bi3 == 0x7fffffffffffffffLL ? -1 : bi3;
      __syncthreads();
    }

    #pragma unroll
    for (int it = 0; it < 1; it++) {
      const i64 j0 = (i64)threadIdx.x * 8 + it * 2048;
      if (j0 < nvr1) {
        float vu7[8];
        fz_unpack_bf16(vu7, vr4[it]);
        float vo9[8];
        #pragma unroll
        for (int u = 0; u < 8; u++) {
          const i64 jj = j0 + u;
          bool tk8 = false;
          for (int q = 0; q < 2; q++) tk8 |= sel[q] == jj;
          vo9[u] = (tk8 ? vu7[u] : -FZ_INF);
        }
        fz_st8_bf16(p1 + (((ri0*(8*dim_S)) + (ri1*8)) + j0), vo9);
      }
    }
    for (i64 jj = nvr1 + threadIdx.x; jj < 8; jj += 256) {
      const float t10 = fz_ld_bf16(p0 + (((ri0*(8*dim_S)) + (ri1*8)) + jj));
      bool tk11 = false;
      for (int q = 0; q < 2; q++) tk11 |= sel[q] == jj;
      fz_st_bf16(p1 + (((ri0*(8*dim_S)) + (ri1*8)) + jj), (tk11 ? t10 : -FZ_INF));
    }
  }
}

extern "C" __global__ void __launch_bounds__(256, 4) k06_row_topk(const u16* __restrict__ v50_r, u16* __restrict__ v51, i64 dim_B, i64 dim_S, i64 dim_T) { fz_grid_sync(); fzb_13bb3887c07482d0(v50_r, v51, dim_B, dim_S, dim_T); }
