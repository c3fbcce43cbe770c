// body of k12_row_causal
FZ_DEV void fzb_1593288a71ef3cbd(const float* __restrict__ p0, const int* __restrict__ p1, const int* __restrict__ p2, float* __restrict__ p3, i64 dim_B, i64 dim_N, i64 dim_T) {
  const i64 nch = (((dim_N + dim_T) + 7)/8);
  const i64 total = (4*dim_N) * nch;
  for (i64 c = (i64)blockIdx.x * 256 + threadIdx.x; c < total; c += (i64)gridDim.x * 256) {
    const i64 row = c / nch;
    const i64 j0 = (c - row * nch) * 8;
    const i64 ri0 = (row/dim_N);
    const i64 ri1 = (row%dim_N);
    const i64 vlen = fz_min64(fz_seqlen_ragged(p2, fz_packed_seq(p1, dim_B, ri1)), (dim_N + dim_T));
    if (j0 + 8 <= vlen && fz_aligned(p0 + (((ri0*(dim_N*dim_N + dim_N*dim_T)) + (ri1*(dim_N + dim_T))) + j0), 16) && fz_aligned(p3 + (((ri0*(dim_N*dim_N + dim_N*dim_T)) + (ri1*(dim_N + dim_T))) + j0), 16)) {
      float vl1[8];
      fz_ld8_f32(vl1, p0 + (((ri0*(dim_N*dim_N + dim_N*dim_T)) + (ri1*(dim_N + dim_T))) + j0));
      float vo3[8];
      #pragma unroll
      for (int u = 0; u < 8; u++) {
        const i64 jj = j0 + u;
        const float t2 = (jj > (fz_seqlen_ragged(p2, fz_packed_seq(p1, dim_B, ri1)) - ((i64)p1[fz_packed_seq(p1, dim_B, ri1) + 1] - ri1))) ? -FZ_INF : vl1[u];
        vo3[u] = t2;
      }
      fz_st8_f32(p3 + (((ri0*(dim_N*dim_N + dim_N*dim_T)) + (ri1*(dim_N + dim_T))) + j0), vo3);
    } else {
      #pragma unroll 1
      for (int u = 0; u < 8; u++) {
        const i64 jj = j0 + u;
        if (jj >= (dim_N + dim_T)) break;
        if (jj >= vlen) {
          fz_st_f32(p3 + (((ri0*(dim_N*dim_N + dim_N*dim_T)) + (ri1*(dim_N + dim_T))) + jj), 0.f);
          continue;
        }
        const float t4 = fz_ld_f32(p0 + (((ri0*(dim_N*dim_N + dim_N*dim_T)) + (ri1*(dim_N + dim_T))) + jj));
        const float t5 = (jj > (fz_seqlen_ragged(p2, fz_packed_seq(p1, dim_B, ri1)) - ((i64)p1[fz_packed_seq(p1, dim_B, ri1) + 1] - ri1))) ? -FZ_INF : t4;
        fz_st_f32(p3 + (((ri0*(dim_N*dim_N + dim_N*dim_T)) + (ri1*(dim_N + dim_T))) + jj), t5);
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(256, 1) k12_row_causal(const float* __restrict__ v37_s, const int* __restrict__ v3_qo_indptr, const int* __restrict__ v4_kv_indptr, float* __restrict__ v38, i64 dim_B, i64 dim_N, i64 dim_T) { fz_grid_sync(); fzb_1593288a71ef3cbd(v37_s, v3_qo_indptr, v4_kv_indptr, v38, dim_B, dim_N, dim_T); }
