// body of k00_row_mul_mean_add_rsqrt
FZ_DEV void fzb_e1df01ac6d560780(const u16* __restrict__ p0, const u16* __restrict__ p1, u16* __restrict__ p2, i64 dim_B, i64 dim_S, i64 dim_T) {
  const i64 rows = (dim_B*dim_S);
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const i64 ri0 = (row/dim_S);
    const i64 ri1 = (row%dim_S);

    float acc1 = 0.f;
    const i64 nv4 = (fz_aligned(p0 + (((ri0*(4096*dim_S)) + (ri1*4096))), 16)) ? (4096 & ~7LL) : 0;
    for (i64 j0 = (i64)threadIdx.x * 8; j0 < nv4; j0 += 2048) {
      float vl2[8];
      fz_ld8_bf16(vl2, p0 + (((ri0*(4096*dim_S)) + (ri1*4096)) + j0));
      #pragma unroll
      for (int u = 0; u < 8; u++) {
        const i64 jj = j0 + u;
        const float t3 = vl2[u] * vl2[u];
        acc1 += t3;
      }
    }
    for (i64 jj = nv4 + threadIdx.x; jj < 4096; jj += 256) {
      const float t5 = fz_ld_bf16(p0 + (((ri0*(4096*dim_S)) + (ri1*4096)) + jj));
      const float t6 = t5 * t5;
      acc1 += t6;
    }
    acc1 = fz_block_sum(acc1);
    acc1 = 4096 > 0 ? acc1 / (float)4096 : 0.f;
    const float t8 = acc1 + 9.99999975e-06f;
    const float t9 = rsqrtf(t8);
    const i64 nv14 = (fz_aligned(p0 + (((ri0*(4096*dim_S)) + (ri1*4096))), 16) && fz_aligned(p1, 16) && fz_aligned(p2 + (((ri0*(4096*dim_S)) + (ri1*4096))), 16)) ? (4096 & ~7LL) : 0;
    for (i64 j0 = (i64)threadIdx.x * 8; j0 < nv14; j0 += 2048) {
      float vl7[8];
      fz_ld8_bf16(vl7, p0 + (((ri0*(4096*dim_S)) + (ri1*4096)) + j0));
      float vl11[8];
      fz_ld8_bf16(vl11, p1 + j0);
      float vo13[8];
      #pragma unroll
      for (int u = 0; u < 8; u++) {
        const i64 jj = j0 + u;
        const float t10 = vl7[u] * t9;
        const float t12 = t10 * vl11[u];
        vo13[u] = t12;
      }
      fz_st8_bf16(p2 + (((ri0*(4096*dim_S)) + (ri1*4096)) + j0), vo13);
    }
    for (i64 jj = nv14 + threadIdx.x; jj < 4096; jj += 256) {
      const float t15 = fz_ld_bf16(p0 + (((ri0*(4096*dim_S)) + (ri1*4096)) + jj));
      const float t16 = t15 * t9;
      const float t17 = fz_ld_bf16(p1 + jj);
      const float t18 = t16 * t17;
      fz_st_bf16(p2 + (((ri0*(4096*dim_S)) + (ri1*4096)) + jj), t18);
    }
  }
}
FZ_DEV int fz_gemv_swz(int row) { return ((row >> 1) & 3) << 1; }

// fz_gemv_ring_step adds this warp's 16-row step of one ring stage to
// acc[nb][j][]: w is the stage's weight tile (cols 16-bit columns a row,
// swizzled), x its left-operand rows (xw words a row).
template <int NB, bool BF16>
FZ_DEV void fz_gemv_ring_step(float (*acc)[4][4], const u16* w, const u32* x, int cols, int xw, int wn, int wk) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int off[4] = {0, 1, 8, 9};
  uint4 r[4];
#pragma unroll
  for (int q = 0; q < 4; q++) {
    const int row = 16 * wk + 2 * t + off[q];
    r[q] = *(const uint4*)(w + row * cols + ((wn * 8 + g) ^ fz_gemv_swz(row)) * 8);
  }
  u32 b[NB][2];
#pragma unroll
  for (int nb = 0; nb < NB; nb++) {
    b[nb][0] = x[(nb * 8 + g) * xw + 8 * wk + t];
    b[nb][1] = x[(nb * 8 + g) * xw + 8 * wk + t + 4];
  }
  const u32* r0 = (const u32*)&r[0];
  const u32* r1 = (const u32*)&r[1];
  const u32* r2 = (const u32*)&r[2];
  const u32* r3 = (const u32*)&r[3];
#pragma unroll
  for (int j = 0; j < 4; j++) {
    u32 a[4];
    a[0] = __byte_perm(r0[j], r1[j], 0x5410);
    a[1] = __byte_perm(r0[j], r1[j], 0x7632);
    a[2] = __byte_perm(r2[j], r3[j], 0x5410);
    a[3] = __byte_perm(r2[j], r3[j], 0x7632);
#pragma unroll
    for (int nb = 0; nb < NB; nb++) {
      if (BF16) fz_mma_bf16(acc[nb][j], a, b[nb]);
      else fz_mma_f16(acc[nb][j], a, b[nb]);
    }
  }
}

// fz_gemv_mma_store writes (add: adds) the warp's sums to res[m * tn + c],
// c the warp's first column c0 plus the thread's: D row g of MMA j is
// column 8g+2j, row g+8 column 8g+2j+1; D columns 2t, 2t+1 are rows
// nb*8+2t and nb*8+2t+1 of the left operand. A thread so holds columns
// 8g .. 8g+7 of its two rows, which it stores as two 16-byte words each.
template <int NB>
FZ_DEV void fz_gemv_mma_store(float (*acc)[4][4], float* res, int tn, int c0, bool add) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int nb = 0; nb < NB; nb++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      float4* p = (float4*)(res + (nb * 8 + 2 * t + h) * tn + c0 + g * 8);
      float4 v0 = make_float4(acc[nb][0][h], acc[nb][0][h + 2], acc[nb][1][h], acc[nb][1][h + 2]);
      float4 v1 = make_float4(acc[nb][2][h], acc[nb][2][h + 2], acc[nb][3][h], acc[nb][3][h + 2]);
      if (add) {
        const float4 a0 = p[0], a1 = p[1];
        v0.x += a0.x; v0.y += a0.y; v0.z += a0.z; v0.w += a0.w;
        v1.x += a1.x; v1.y += a1.y; v1.z += a1.z; v1.w += a1.w;
      }
      p[0] = v0;
      p[1] = v1;
    }
}
static __device__ const double fz_rope_411e848000000000_128[64] = {
  1.0, 0.81461723385654472, 0.66360123769608848, 0.54058100463576697, 
  0.44036660267178046, 0.35873022375128993, 0.29222782257301511, 0.23805382048035076, 
  0.19392274474868576, 0.15797280990904319, 0.12868737343265049, 0.10483095217796996, 
  0.085397100285765609, 0.069565949614160322, 0.056669621445291057, 0.046164050265460527, 
  0.03760603093086394, 0.030634520893224049, 0.024955408670558697, 0.020329105980970159, 
  0.016560440080994443, 0.013490419890226745, 0.010989528534539824, 0.0089522593361943993, 
  0.0072926647372171085, 0.0059407303756749668, 0.0048394213457198937, 0.0039422760301166572, 
  0.0032114459947525918, 0.0026160992529250362, 0.0021311195369119657, 0.0017360467021768663, 
  0.001414213562373095, 0.0011520427402627806, 0.00093847387035738002, 0.00076449698831717455, 
  0.00062277242191459588, 0.0005073211476622091, 0.00041327254998551639, 0.00033665894149804201, 
  0.0002742481756762073, 0.00022340729025955571, 0.00018199142881462549, 0.00014825335432657049, 
  0.00012076973741146507, 9.8381109423708896e-05, 8.014294722247978e-05, 6.5285825979487534e-05, 
  5.3182958969449876e-05, 4.3323754923999369e-05, 3.5292277396467233e-05, 2.8749697389207992e-05, 
  2.3419998961409342e-05, 1.907833477086643e-05, 1.5541540297632348e-05, 1.2660406567127279e-05, 
  1.0313385377212458e-05, 8.4014614676813499e-06, 6.8439753011549284e-06, 5.5752202284093402e-06, 
  4.5416704806078695e-06, 3.6997230440007069e-06, 3.0138581521391708e-06, 2.4551407911316089e-06, 
};

extern "C" __global__ void __launch_bounds__(256, 1) k00_row_mul_mean_add_rsqrt(const u16* __restrict__ v1_x, const u16* __restrict__ v3_wn1, u16* __restrict__ v16_h, i64 dim_B, i64 dim_S, i64 dim_T) { fz_grid_sync(); fzb_e1df01ac6d560780(v1_x, v3_wn1, v16_h, dim_B, dim_S, dim_T); }
