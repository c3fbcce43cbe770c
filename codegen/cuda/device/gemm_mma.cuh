/*
 * The main loop of the mma.sync GEMM tile (codegen/cuda/mma.go instantiates
 * it in a matmul kernel whose operands allow the tensor-core tiles and
 * whose launch does not take wgmma): a TM x TN tile of one unit over all of
 * K in TK steps through a ring of STAGES cp.async stages in shared memory
 * (smem: STAGES x (TM x TK + TK x TN) 16-bit elements), its sums left in
 * the accumulators of mma.sync m16n8k16 fragments: warp (wm, wn) of the 8,
 * wm = (wid >> 1) & 3 and wn = wid & 1, holds rows 32wm .. 32wm+31 as two
 * m16 tiles and the four n8 tiles of slots C::nslot(seg, wn, nt).
 *
 * sArow holds the address of each tile row's first position of K in the
 * left operand (null past the rows), sBrow (a K-contiguous right operand,
 * !C::BN) each slot's; a right operand with N contiguous is read through
 * C::b at the tile's columns scol, eight contiguous ones a copy where they
 * are, fewer (zero-filled) where a group breaks. Every copy past K or the
 * rows is a zero fill, so that the MMAs run without a bounds test. A stage's
 * 16-byte chunks are swizzled (chunk c of row r at c ^ ((r >> 1) & 3) in a
 * 32-position row, at c ^ (r & 7) in a 64-slot one) so that ldmatrix reads
 * distinct banks.
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */
template <class C, bool BF16, int TM, int TN, int TK, int STAGES>
FZ_DEV void fz_mma_mainloop(const C& cx, const i64 ub, const i64 kv, const int seg, u16* smem, const u16* const* sArow, const u16* const* sBrow, const i64* scol, float (&acc)[2][4][4]) {
  const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
  const int wm = (wid >> 1) & 3, wn = wid & 1;
  constexpr int STAGE = TM * TK + TK * TN;
#pragma unroll
  for (int a = 0; a < 2; a++)
#pragma unroll
    for (int b = 0; b < 4; b++)
#pragma unroll
      for (int c = 0; c < 4; c++) acc[a][b][c] = 0.f;
  const i64 ktiles = (kv + TK - 1) / TK;
  auto load = [&](i64 kt) {
    u16* sa = smem + (kt % STAGES) * STAGE;
    u16* sb = sa + TM * TK;
    const i64 kb = kt * TK;
    for (int id = tid; id < TM * TK / 8; id += blockDim.x) {
      const int row = id >> 2, ch = id & 3;
      const i64 kk = kb + ch * 8;
      const u16* src = sArow[row];
      const int bytes = src && kk < kv ? (int)fz_min64(16, (kv - kk) * 2) : 0;
      fz_cp16b(sa + row * TK + ((ch ^ ((row >> 1) & 3)) << 3), bytes ? src + kk : sArow[0] ? sArow[0] : (const u16*)0, bytes);
    }
    if constexpr (C::BN) {
      for (int id = tid; id < TK * TN / 8; id += blockDim.x) {
        const int kr = id >> 3, ch = id & 7;
        const i64 krow = kb + kr;
        const i64 c = scol[ch * 8];
        int nvalid = 0;
        if (c >= 0 && krow < kv) { nvalid = 1; while (nvalid < 8 && scol[ch * 8 + nvalid] == c + nvalid) nvalid++; }
        const u16* src = nvalid ? (const u16*)cx.b(ub, krow, c) : (const u16*)sArow[0];
        fz_cp16b(sb + kr * TN + ((ch ^ (kr & 7)) << 3), src, nvalid * 2);
      }
    } else {
      for (int id = tid; id < TN * TK / 8; id += blockDim.x) {
        const int row = id >> 2, ch = id & 3;
        const i64 kk = kb + ch * 8;
        const u16* src = sBrow[row];
        const int bytes = src && kk < kv ? (int)fz_min64(16, (kv - kk) * 2) : 0;
        fz_cp16b(sb + row * TK + ((ch ^ ((row >> 1) & 3)) << 3), bytes ? src + kk : (const u16*)sArow[0], bytes);
      }
    }
  };
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) { if (s < ktiles) load(s); fz_cp_commit(); }
  for (i64 kt = 0; kt < ktiles; kt++) {
    fz_cp_wait<STAGES - 2>();
    __syncthreads();
    if (kt + STAGES - 1 < ktiles) load(kt + STAGES - 1);
    fz_cp_commit();
    if (wid < 8) {
      const u16* sa = smem + (kt % STAGES) * STAGE;
      const u16* sb = sa + TM * TK;
#pragma unroll
      for (int kk = 0; kk < TK / 16; kk++) {
        u32 af[2][4], bf[4][2];
#pragma unroll
        for (int mt = 0; mt < 2; mt++) {
          const int row = wm * 32 + mt * 16 + (lane & 15), ch = kk * 2 + (lane >> 4);
          fz_ldsm4(af[mt], sa + row * TK + ((ch ^ ((row >> 1) & 3)) << 3));
        }
#pragma unroll
        for (int np = 0; np < 2; np++) {
          const int nt = np * 2 + (lane >> 4);
          const int nbase = C::nslot(seg, wn, nt);
          u32 r[4];
          if constexpr (C::BN) {
            const int kr = kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3), ch = nbase >> 3;
            fz_ldsm4t(r, sb + kr * TN + ((ch ^ (kr & 7)) << 3));
          } else {
            const int row = nbase + (lane & 7), ch = kk * 2 + ((lane >> 3) & 1);
            fz_ldsm4(r, sb + row * TK + ((ch ^ ((row >> 1) & 3)) << 3));
          }
          bf[np * 2][0] = r[0]; bf[np * 2][1] = r[1]; bf[np * 2 + 1][0] = r[2]; bf[np * 2 + 1][1] = r[3];
        }
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
          for (int nt = 0; nt < 4; nt++) {
            if constexpr (BF16) fz_mma_bf16(acc[mt][nt], af[mt], bf[nt]);
            else fz_mma_f16(acc[mt][nt], af[mt], bf[nt]);
          }
      }
    }
  }
  fz_cp_wait<0>();
  __syncthreads();
}
