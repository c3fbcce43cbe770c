// body of k00_row_mul_mean_add_rsqrt
FZ_DEV void fzb_2b56feb44028ea15(const u16* __restrict__ p0, const u16* __restrict__ p1, u16* __restrict__ p2, i64 dim_B, i64 dim_S, i64 dim_T) {
  const i64 rows = (dim_B*dim_S);
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const i64 ri0 = (row/dim_S);
    const i64 ri1 = (row%dim_S);
    const i64 nvr1 = (fz_aligned(p0 + (((ri0*(4096*dim_S)) + (ri1*4096))), 16) && fz_aligned(p1, 16) && fz_aligned(p2 + (((ri0*(4096*dim_S)) + (ri1*4096))), 16)) ? 4096 : 0;
    uint4 vr3[2];
    uint4 vr12[2];

    float acc2 = 0.f;
    #pragma unroll
    for (int it = 0; it < 2; it++) {
      const i64 j0 = (i64)threadIdx.x * 8 + it * 2048;
      if (j0 < nvr1) {
        vr3[it] = *(const uint4*)(p0 + (((ri0*(4096*dim_S)) + (ri1*4096)) + j0));
        float vu4[8];
        fz_unpack_bf16(vu4, vr3[it]);
        #pragma unroll
        for (int u = 0; u < 8; u++) {
          const i64 jj = j0 + u;
          const float t5 = vu4[u] * vu4[u];
          acc2 += t5;
        }
      }
    }
    for (i64 jj = nvr1 + threadIdx.x; jj < 4096; jj += 256) {
      const float t6 = fz_ld_bf16(p0 + (((ri0*(4096*dim_S)) + (ri1*4096)) + jj));
      const float t7 = t6 * t6;
      acc2 += t7;
    }
    acc2 = fz_block_sum(acc2);
    acc2 = 4096 > 0 ? acc2 / (float)4096 : 0.f;
    const float t9 = acc2 + 9.99999975e-06f;
    const float t10 = rsqrtf(t9);
    #pragma unroll
    for (int it = 0; it < 2; it++) {
      const i64 j0 = (i64)threadIdx.x * 8 + it * 2048;
      if (j0 < nvr1) {
        vr12[it] = *(const uint4*)(p1 + j0);
        float vu8[8];
        fz_unpack_bf16(vu8, vr3[it]);
        float vu13[8];
        fz_unpack_bf16(vu13, vr12[it]);
        float vo15[8];
        #pragma unroll
        for (int u = 0; u < 8; u++) {
          const i64 jj = j0 + u;
          const float t11 = vu8[u] * t10;
          const float t14 = t11 * vu13[u];
          vo15[u] = t14;
        }
        fz_st8_bf16(p2 + (((ri0*(4096*dim_S)) + (ri1*4096)) + j0), vo15);
      }
    }
    for (i64 jj = nvr1 + threadIdx.x; jj < 4096; jj += 256) {
      const float t16 = fz_ld_bf16(p0 + (((ri0*(4096*dim_S)) + (ri1*4096)) + jj));
      const float t17 = t16 * t10;
      const float t18 = fz_ld_bf16(p1 + jj);
      const float t19 = t17 * t18;
      fz_st_bf16(p2 + (((ri0*(4096*dim_S)) + (ri1*4096)) + jj), t19);
    }
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

extern "C" __global__ void __launch_bounds__(256, 4) k00_row_mul_mean_add_rsqrt(const u16* __restrict__ v1_x, const u16* __restrict__ v3_wn1, u16* __restrict__ v16_h, i64 dim_B, i64 dim_S, i64 dim_T) { fz_grid_sync(); fzb_2b56feb44028ea15(v1_x, v3_wn1, v16_h, dim_B, dim_S, dim_T); }
