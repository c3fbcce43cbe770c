/*
 * The mma.sync tensor-core GEMV for 2 to 64 rows over a row-major 16-bit
 * weight (codegen/cuda/gemv_mma.go instantiates it where the launch does
 * not take wgmma: sm_80). The weight is the A operand
 * of mma.sync m16n8k16 and the rows of the left operand its B operand, so
 * that the weight, read once, feeds every row: y^T = W^T x^T.
 *
 * Weight tiles of 32 rows of K by the tile's 256 columns stream through a
 * ring of cp.async stages in shared memory (plan.GemvRingStages), each with
 * the same 32 positions of the left operand's rows. Warp (wn, wk) of the 8
 * takes columns 64wn .. 64wn+63 and the 16-row step wk of every stage:
 * thread (g = lane / 4, t = lane % 4) reads the 8 contiguous columns 8g ..
 * 8g+7 of its warp's 64 in the step's rows 2t, 2t+1, 2t+8, 2t+9. Word j of
 * such a row holds columns 8g+2j and 8g+2j+1, so pairing the rows' halves
 * with byte permutes gives MMA j's A fragment: its row g is column 8g+2j,
 * its row g+8 column 8g+2j+1. Its n8 tiles are the left operand's rows.
 *
 * A weight row of the stage holds its 16-byte chunks swizzled (chunk c at
 * c ^ fz_gemv_swz(row)), so that the 8 lanes of a 16-byte shared load read
 * 8 distinct bank groups.
 *
 * The tile functions read the kernel's context C (@BODY@_ctx, see
 * gemv.cuh) and, beyond the CUDA-core tile's members, its ring: GV_TN
 * column slots a tile, GV_ROWS positions of K a stage, GV_STAGES stages
 * of GV_STAGE_BYTES bytes, GV_XROW_BYTES bytes a row of the left operand
 * in a stage (mma.sync only), BF16 (bf16 operands, else f16), and for
 * the wgmma GEMV BSIMPLE (the weight's K axis is one stride, bks()).
 * Every copy past the operands (K past k1, rows past mr, columns past the
 * tile) is a zero fill, so that the MMAs run without a bounds test.
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */
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

// fz_gemv_mma_tile is the mma.sync GEMV of NB n8 tiles of rows: rows r0 ..
// r0+mr-1 (mr <= 8 NB) of unit ub against the tile's columns scol, over
// positions [k0, k1), the sums left in res[8 NB][GV_TN]. Thread tid copies
// column group wc of weight rows (tid >> 5) + 8i, and positions xc .. xc+7
// of left-operand row xm, of every stage. Warps 0-3 take the first 16-row
// step of a stage, warps 4-7 the second; the two halves' sums are added in
// res once the ring has drained.
template <class C, int NB>
FZ_DEV void fz_gemv_mma_tile(const C& c, const i64 ub, const i64 r0, const int mr, const i64 k0, const i64 k1, const i64* scol, unsigned char* ring, float* res) {
  constexpr int TN = C::GV_TN, ROWS = C::GV_ROWS, ST = C::GV_STAGES, SB = C::GV_STAGE_BYTES, XRB = C::GV_XROW_BYTES;
  constexpr int WB = ROWS * TN * 2;
  const int tid = threadIdx.x, wid = tid >> 5, wn = wid & 3, wk = wid >> 2;
  const int wc = tid & 31, xm = tid >> 2, xc = (tid & 3) * 8;
  const i64 col = scol[wc * 8], cl = col >= 0 ? col : 0;
  const u16* ap = c.a(ub, r0 + (xm < mr ? xm : mr - 1), 0);
  const i64 nst = (k1 - k0 + ROWS - 1) / ROWS;
  auto issue = [&](i64 st) {
    unsigned char* sb = ring + (st % ST) * SB;
    const i64 kb = k0 + st * ROWS;
#pragma unroll
    for (int i = 0; i < ROWS / 8; i++) {
      const int row = (tid >> 5) + 8 * i;
      const bool ok = col >= 0 && kb + row < k1;
      const i64 kr = ok ? kb + row : k0;
      fz_cp16b(sb + (row * TN + (wc ^ fz_gemv_swz(row)) * 8) * 2, c.b(ub, kr, cl), ok ? 16 : 0);
    }
    if (xm < NB * 8) {
      const i64 kx = kb + xc;
      const int bytes = xm < mr ? (int)fz_max64(0, fz_min64(16, 2 * (k1 - kx))) : 0;
      fz_cp16b(sb + WB + xm * XRB + xc * 2, ap + (bytes > 0 ? kx : k0), bytes);
    }
  };
  float acc[NB][4][4];
#pragma unroll
  for (int i = 0; i < NB * 16; i++) (&acc[0][0][0])[i] = 0.f;
  for (int s = 0; s < ST - 1; s++) {
    if (s < nst) issue(s);
    fz_cp_commit();
  }
  for (i64 st = 0; st < nst; st++) {
    fz_cp_wait<ST - 2>();
    __syncthreads();
    if (st + ST - 1 < nst) issue(st + ST - 1);
    fz_cp_commit();
    const unsigned char* sb = ring + (st % ST) * SB;
    fz_gemv_ring_step<NB, C::BF16>(acc, (const u16*)sb, (const u32*)(sb + WB), TN, XRB / 4, wn, wk);
  }
  fz_cp_wait<0>();
  __syncthreads();
  if (wk == 1) fz_gemv_mma_store<NB>(acc, res, TN, wn * 64, false);
  __syncthreads();
  if (wk == 0) fz_gemv_mma_store<NB>(acc, res, TN, wn * 64, true);
  __syncthreads();
}
