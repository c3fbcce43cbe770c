// ---- attention: the tensor copy engine (device/attention_bulk.cuh) ----
// Rows a map addresses from its base (int32 box coordinates;
// codegen.RowMapRows).
#define FZ_ATT_TROWS 0x7fffffff
// fz_att_tma_kv copies rows rk .. rk + 15 and rv .. rv + 15 of map g (the
// kernel parameter's address) to shared addresses dk and dv (DH * 32 bytes
// each), completing on the mbarrier at b. One thread calls it, after the
// warp's reads of the stage.
template <int DH> FZ_DEV void fz_att_tma_kv(u32 dk, u32 dv, const fz_tmap* g, int rk, int rv, u32 b) {
#if FZ_TMA
  asm volatile("fence.proxy.async.shared::cta;\n\tmbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(b), "r"(64 * DH) : "memory");
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
               :: "r"(dk), "l"(g), "r"(0), "r"(rk), "r"(0), "r"(b) : "memory");
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
               :: "r"(dv), "l"(g), "r"(0), "r"(rv), "r"(0), "r"(b) : "memory");
#endif
}
// fz_att_swz is the byte offset of 16-byte chunk ch of row r in a swizzled
// tile of 16 rows.
FZ_DEV u32 fz_att_swz(int r, int ch) { return (u32)((ch >> 3) * 2048 + r * 128 + (((ch & 7) ^ (r & 7)) << 4)); }

// ---- attention: FlashAttention-2 prefill and split-KV Flash-Decoding on
// mma.sync m16n8k16, the merge of the splits (codegen/cuda/attention_flash*) ----
FZ_DEV float fz_att_ex2(float x) { float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
// fz_att_tanh is tanh through one ex2 (absolute error about 1e-7).
FZ_DEV float fz_att_tanh(float x) {
  const float e = fz_att_ex2(-2.8853900817779268f * fabsf(x));
  return copysignf(__fdividef(1.f - e, 1.f + e), x);
}
template <bool BF> FZ_DEV void fz_att_mma(float* d, const u32* a, const u32* b) {
  if (BF) fz_mma_bf16(d, a, b); else fz_mma_f16(d, a, b);
}
template <bool BF> FZ_DEV u32 fz_att_pack(float lo, float hi) { return BF ? fz_pack_bf16(lo, hi) : fz_pack_f16(lo, hi); }
// fz_att_ldsm4 is ldmatrix .x4 (.trans when trans) at shared address a.
FZ_DEV void fz_att_ldsm4(u32* r, u32 a, bool trans) {
  if (trans) asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
  else asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
// fz_att_ld2 is elements d and d + 1 of a row of DH 16-bit values as one
// packed word: 0 past DH and for a null row.
template <int DH> FZ_DEV u32 fz_att_ld2(const u16* p, int d) {
  if (p == 0 || d >= DH) return 0u;
  if (DH % 2 == 0 && fz_aligned(p + d, 4)) return *(const u32*)(p + d);
  const u32 lo = p[d], hi = d + 1 < DH ? (u32)p[d + 1] : 0u;
  return lo | (hi << 16);
}
// fz_att_tile stages keys j0 .. j0 + ROWS - 1 of the K (comp 0) or V
// (comp 1) rows of sequence b, kv head g into s: 16-byte cp.async copies
// (the caller commits the group), zeros for keys at jend or later and for
// dims past DH; rows that are not 16-byte aligned are copied by the threads.
template <int DH, int DP, int ROWS, int NT, class C>
FZ_DEV void fz_att_tile(const C& c, u16* s, int comp, i64 b, i64 g, i64 npre, i64 j0, i64 jend) {
  constexpr int CH = DP / 8, LDS = DP + 8;
#pragma unroll 1
  for (int e0 = 0; e0 < ROWS * CH; e0 += NT) {
    const int e = e0 + (int)threadIdx.x;
    if ((ROWS * CH) % NT == 0 || e < ROWS * CH) {
      const int r = e / CH, ch = e - r * CH;
      const i64 j = j0 + r;
      const int n = DH - ch * 8 < 8 ? DH - ch * 8 : 8;
      u16* dst = s + r * LDS + ch * 8;
      const u16* src = j < jend && n > 0 ? c.row(comp, b, g, j, npre) + ch * 8 : (const u16*)0;
      if (src != 0 && n == 8 && fz_aligned(src, 16)) {
        fz_cp16b(dst, src, 16);
      } else if (src == 0) {
        *(uint4*)dst = make_uint4(0u, 0u, 0u, 0u);
      } else {
        u32 x[4];
#pragma unroll
        for (int i = 0; i < 4; i++) x[i] = (2 * i < n ? (u32)src[2 * i] : 0u) | ((2 * i + 1 < n ? (u32)src[2 * i + 1] : 0u) << 16);
        *(uint4*)dst = make_uint4(x[0], x[1], x[2], x[3]);
      }
    }
  }
}

// fz_att_qrows loads the A fragments of 16 query rows (row pointers q[0]
// for the thread's row lane/4, q[1] for row lane/4 + 8; null rows read 0).
template <int DH, int DP> FZ_DEV void fz_att_qrows(u32 (&qf)[DP / 16][4], const u16* const (&q)[2], int tq) {
#pragma unroll
  for (int kk = 0; kk < DP / 16; kk++) {
    const int d = kk * 16 + tq * 2;
    qf[kk][0] = fz_att_ld2<DH>(q[0], d);
    qf[kk][1] = fz_att_ld2<DH>(q[1], d);
    qf[kk][2] = fz_att_ld2<DH>(q[0], d + 8);
    qf[kk][3] = fz_att_ld2<DH>(q[1], d + 8);
  }
}

// fz_att_qk computes the raw scores s = q · k^T of 16 query rows against
// the BC keys of the shared tile k.
template <int DP, int BC, bool BF>
FZ_DEV void fz_att_qk(float (&s)[BC / 8][4], const u32 (&qf)[DP / 16][4], const u16* k, int lane) {
  constexpr int LDS = DP + 8;
  const u32 base = fz_smem_addr(k + (((lane >> 4) << 3) + (lane & 7)) * LDS + (((lane >> 3) & 1) << 3));
#pragma unroll
  for (int n = 0; n < BC / 8; n++) { s[n][0] = 0.f; s[n][1] = 0.f; s[n][2] = 0.f; s[n][3] = 0.f; }
#pragma unroll
  for (int kk = 0; kk < DP / 16; kk++) {
#pragma unroll
    for (int np = 0; np < BC / 16; np++) {
      u32 r[4];
      fz_att_ldsm4(r, base + 2 * (np * 16 * LDS + kk * 16), false);
      const u32 b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      fz_att_mma<BF>(s[2 * np], qf[kk], b0);
      fz_att_mma<BF>(s[2 * np + 1], qf[kk], b1);
    }
  }
}

// fz_att_qfrag loads the A fragments of the 16 query rows in shared
// memory q (rows of DP + 8 elements) with ldmatrix.
template <int DP> FZ_DEV void fz_att_qfrag(u32 (&qf)[DP / 16][4], const u16* q, int lane) {
  constexpr int LDS = DP + 8;
  const u32 qb = fz_smem_addr(q + ((lane & 7) + (((lane >> 3) & 1) << 3)) * LDS + ((lane >> 4) << 3));
#pragma unroll
  for (int kk = 0; kk < DP / 16; kk++) fz_att_ldsm4(qf[kk], qb + 2 * kk * 16, false);
}

// fz_att_qks is fz_att_qk with the 16 query rows in shared memory (rows
// of DP + 8 elements), their A fragments loaded with ldmatrix per k step
// instead of held in registers.
template <int DP, int BC, bool BF>
FZ_DEV void fz_att_qks(float (&s)[BC / 8][4], const u16* q, const u16* k, int lane) {
  constexpr int LDS = DP + 8;
  const u32 qb = fz_smem_addr(q + ((lane & 7) + (((lane >> 3) & 1) << 3)) * LDS + ((lane >> 4) << 3));
  const u32 base = fz_smem_addr(k + (((lane >> 4) << 3) + (lane & 7)) * LDS + (((lane >> 3) & 1) << 3));
#pragma unroll
  for (int n = 0; n < BC / 8; n++) { s[n][0] = 0.f; s[n][1] = 0.f; s[n][2] = 0.f; s[n][3] = 0.f; }
#pragma unroll
  for (int kk = 0; kk < DP / 16; kk++) {
    u32 a[4];
    fz_att_ldsm4(a, qb + 2 * kk * 16, false);
#pragma unroll
    for (int np = 0; np < BC / 16; np++) {
      u32 r[4];
      fz_att_ldsm4(r, base + 2 * (np * 16 * LDS + kk * 16), false);
      const u32 b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      fz_att_mma<BF>(s[2 * np], a, b0);
      fz_att_mma<BF>(s[2 * np + 1], a, b1);
    }
  }
}

// fz_att_swt is the element offset of chunk ch (keys 8 ch .. 8 ch + 7) of
// row d (a head dim) of a shared tile of BC keys stored transposed: rows
// of BC elements, unpadded, the chunks of a row permuted by an XOR with
// bits of d so that the 8 rows an ldmatrix reads at one chunk fall in
// distinct 16-byte bank groups. DP rows fit the space of BC padded rows.
template <int BC> FZ_DEV int fz_att_swt(int d, int ch) {
  constexpr int CH = BC / 8;
  static_assert(BC % 16 == 0 && (CH & (CH - 1)) == 0, "tiles of a power of two of 16-key blocks");
  const int x = CH >= 8 ? d & 7 : (d / (8 / CH)) & (CH - 1);
  return d * BC + (ch ^ x) * 8;
}

// fz_att_qkt is fz_att_qk (QREG: the query fragments qf) or fz_att_qks
// (the query rows q in shared memory) over a tile k of BC keys stored
// transposed (fz_att_swt): the B fragment of 16 dims × 8 keys is read
// from 16 rows of dims by ldmatrix .trans, the relation fz_att_pv's V
// tile has to P·V. The chunk's XOR is the same at every k step.
template <int DP, int BC, bool QREG, bool BF>
FZ_DEV void fz_att_qkt(float (&s)[BC / 8][4], const u32 (&qf)[QREG ? DP / 16 : 1][4], const u16* q, const u16* k, int lane) {
  const int d0 = (lane & 7) + (((lane >> 3) & 1) << 3);
  const u32 kb = fz_smem_addr(k);
  u32 qb = 0;
  if constexpr (!QREG) qb = fz_smem_addr(q + d0 * (DP + 8) + ((lane >> 4) << 3));
#pragma unroll
  for (int n = 0; n < BC / 8; n++) { s[n][0] = 0.f; s[n][1] = 0.f; s[n][2] = 0.f; s[n][3] = 0.f; }
#pragma unroll
  for (int kk = 0; kk < DP / 16; kk++) {
    u32 a[4];
    const u32* av = a;
    if constexpr (QREG) av = qf[kk];
    else fz_att_ldsm4(a, qb + 2 * kk * 16, false);
#pragma unroll
    for (int np = 0; np < BC / 16; np++) {
      u32 r[4];
      fz_att_ldsm4(r, kb + 2 * (fz_att_swt<BC>(d0, 2 * np + (lane >> 4)) + kk * 16 * BC), true);
      const u32 b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      fz_att_mma<BF>(s[2 * np], av, b0);
      fz_att_mma<BF>(s[2 * np + 1], av, b1);
    }
  }
}

// fz_att_tdist is the mask of a tile of keys k0 .. k0 + BC - 1 in
// tile-relative ints: the distances d0, d1 of the thread's two queries (at
// pos) to the tile's first key, clamped, and the keys nk of the tile that
// exist (keys at jend or later do not).
template <int BC> FZ_DEV void fz_att_tdist(const i64 (&pos)[2], i64 k0, i64 jend, int& d0, int& d1, int& nk) {
  const i64 lim = 1 << 30;
  d0 = (int)fz_max64(-lim, fz_min64(lim, pos[0] - k0));
  d1 = (int)fz_max64(-lim, fz_min64(lim, pos[1] - k0));
  nk = (int)fz_min64(BC, jend - k0);
}

// fz_att_nobias stands for the bias rows of a kernel without a score bias
// (C::BIAS false): fz_att_smod then applies the score modifier alone.
struct fz_att_nobias {};

// fz_att_brow is the bias row of query i of head h of sequence b (null
// where ok is false: a row past the queries), or fz_att_nobias without a
// bias.
template <class C> FZ_DEV auto fz_att_brow(const C& c, i64 b, i64 h, i64 i, bool ok) {
  if constexpr (C::BIAS) return ok ? c.brow(b, h, i) : (decltype(c.brow(b, h, i)))0;
  else return fz_att_nobias{};
}

// fz_att_smod applies the score modifier to a tile's raw scores s.
template <int BC, class C>
FZ_DEV void fz_att_smod(const C& c, float (&s)[BC / 8][4], const fz_att_nobias (&)[2], const i64 (&)[2], i64, i64, bool, int) {
#pragma unroll
  for (int n = 0; n < BC / 8; n++) {
#pragma unroll
    for (int e = 0; e < 4; e++) s[n][e] = c.smod(s[n][e]);
  }
}

// fz_att_smod with the score bias: the thread's two rows' bias rows br
// (null past the queries: no bias read) add their key's bias to the
// scaled score before softcap (c.smodb). With mask, the keys the mask
// hides or that do not exist read no bias: their scores become -inf here.
template <int BC, class C, class T>
FZ_DEV void fz_att_smod(const C& c, float (&s)[BC / 8][4], T* const (&br)[2], const i64 (&pos)[2], i64 k0, i64 jend, bool mask, int tq) {
  int d0 = 0, d1 = 0, nk = BC;
  if (mask) fz_att_tdist<BC>(pos, k0, jend, d0, d1, nk);
#pragma unroll
  for (int n = 0; n < BC / 8; n++) {
#pragma unroll
    for (int e = 0; e < 4; e++) {
      const int jj = n * 8 + tq * 2 + (e & 1);
      T* const r = br[e >> 1];
      if (mask && (jj >= nk || !c.visible((e >> 1 ? d1 : d0) - jj))) s[n][e] = -FZ_INF;
      else s[n][e] = c.smodb(s[n][e], r ? c.bld(r, k0 + jj) : 0.f);
    }
  }
}

// fz_att_scores is one online-softmax step over a tile of keys k0 .. k0 +
// BC - 1 but the output's rescaling: the score modifier (with the bias
// rows br, fz_att_smod), the mask where
// mask is set (keys at jend or later do not exist; pos are the thread's two
// query positions, and the mask is a function of the distance query
// position - key position), the new running max m (reduced over the quad
// sharing a row), the rescaling of l, and the probabilities in place of the
// scores s. It returns whether the output must be rescaled, by alpha (a
// factor a row). l stays a per-thread partial sum until fz_att_lsum. With
// lazy, the warp keeps its running maxima (and skips the rescaling) unless
// a row's max grows past it by more than 2^8: the probabilities stay below
// 256, and o and l are relative to whichever max m holds, so the result is
// the same.
template <int BC, class C, class BR>
FZ_DEV bool fz_att_scores(const C& c, float (&s)[BC / 8][4], float (&m)[2], float (&l)[2], float (&alpha)[2],
                          const i64 (&pos)[2], const BR (&br)[2], i64 k0, i64 jend, bool mask, int tq, bool lazy) {
  fz_att_smod<BC>(c, s, br, pos, k0, jend, mask, tq);
  if (mask) {
    int d0, d1, nk;
    fz_att_tdist<BC>(pos, k0, jend, d0, d1, nk);
#pragma unroll
    for (int n = 0; n < BC / 8; n++) {
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int jj = n * 8 + tq * 2 + (e & 1);
        if (jj >= nk || !c.visible((e >> 1 ? d1 : d0) - jj)) s[n][e] = -FZ_INF;
      }
    }
  }
  float mt[2];
#pragma unroll
  for (int h = 0; h < 2; h++) {
    float mx = m[h];
#pragma unroll
    for (int n = 0; n < BC / 8; n++) mx = fmaxf(mx, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mt[h] = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
  }
  const bool up = !lazy || __any_sync(0xffffffffu, mt[0] > m[0] + 8.f || mt[1] > m[1] + 8.f);
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const float mx = up ? mt[h] : m[h];
    const float mu = mx == -FZ_INF ? 0.f : mx;
    float sum = 0.f;
#pragma unroll
    for (int n = 0; n < BC / 8; n++) {
      s[n][2 * h] = fz_att_ex2(s[n][2 * h] - mu);
      s[n][2 * h + 1] = fz_att_ex2(s[n][2 * h + 1] - mu);
      sum += s[n][2 * h] + s[n][2 * h + 1];
    }
    if (up) {
      alpha[h] = fz_att_ex2(m[h] - mu);
      m[h] = mx;
      l[h] = l[h] * alpha[h] + sum;
    } else {
      l[h] += sum;
    }
  }
  return up;
}

// fz_att_probs converts the probabilities s into A fragments p for P·V.
template <int BC, bool BF> FZ_DEV void fz_att_probs(const float (&s)[BC / 8][4], u32 (&p)[BC / 16][4]) {
#pragma unroll
  for (int kk = 0; kk < BC / 16; kk++) {
    p[kk][0] = fz_att_pack<BF>(s[2 * kk][0], s[2 * kk][1]);
    p[kk][1] = fz_att_pack<BF>(s[2 * kk][2], s[2 * kk][3]);
    p[kk][2] = fz_att_pack<BF>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    p[kk][3] = fz_att_pack<BF>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
  }
}

// fz_att_rescale multiplies the output o by alpha, a factor a row.
template <int NO> FZ_DEV void fz_att_rescale(float (&o)[NO][4], const float (&alpha)[2]) {
#pragma unroll
  for (int i = 0; i < NO; i++) {
    o[i][0] *= alpha[0];
    o[i][1] *= alpha[0];
    o[i][2] *= alpha[1];
    o[i][3] *= alpha[1];
  }
}

// fz_att_online is fz_att_scores with the output's rescaling, and the
// probabilities as A fragments p for P·V.
template <int BC, int NO, bool BF, class C, class BR>
FZ_DEV void fz_att_online(const C& c, float (&s)[BC / 8][4], float (&m)[2], float (&l)[2], float (&o)[NO][4],
                          u32 (&p)[BC / 16][4], const i64 (&pos)[2], const BR (&br)[2], i64 k0, i64 jend, bool mask, int tq, bool lazy = false) {
  float alpha[2];
  if (fz_att_scores<BC>(c, s, m, l, alpha, pos, br, k0, jend, mask, tq, lazy)) fz_att_rescale(o, alpha);
  fz_att_probs<BC, BF>(s, p);
}

// fz_att_pv accumulates o += p · v for NP pairs of n8 tiles of the head dim
// (16 dims each): pairs pr0, pr0 + step, ...; pairs past the head dim are
// skipped (warp-uniform).
template <int DP, int BC, int NP, bool BF>
FZ_DEV void fz_att_pv(float (&o)[2 * NP][4], const u32 (&p)[BC / 16][4], const u16* v, int lane, int pr0, int step) {
  constexpr int LDS = DP + 8;
  const u32 base = fz_smem_addr(v + ((lane & 7) + (((lane >> 3) & 1) << 3)) * LDS + pr0 * 16 + ((lane >> 4) << 3));
#pragma unroll
  for (int kk = 0; kk < BC / 16; kk++) {
#pragma unroll
    for (int i = 0; i < NP; i++) {
      if (pr0 + i * step >= DP / 16) continue;
      u32 r[4];
      fz_att_ldsm4(r, base + 2 * (kk * 16 * LDS + i * step * 16), true);
      const u32 b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      fz_att_mma<BF>(o[2 * i], p[kk], b0);
      fz_att_mma<BF>(o[2 * i + 1], p[kk], b1);
    }
  }
}

// fz_att_qk_sw is the scores of a decode tile of 16 keys in the swizzled
// layout of the tensor copy engine (fz_att_swz) at shared address k:
// fz_att_qk with the query fragments qf when QREG, else fz_att_qks with
// the query rows q in shared memory.
template <int DP, bool QREG, bool BF>
FZ_DEV void fz_att_qk_sw(float (&s)[2][4], const u32 (&qf)[QREG ? DP / 16 : 1][4], const u16* q, u32 k, int lane) {
  constexpr int LDS = DP + 8;
  const u32 qb = fz_smem_addr(q + ((lane & 7) + (((lane >> 3) & 1) << 3)) * LDS + ((lane >> 4) << 3));
  const u32 base = k + (((lane >> 4) << 3) + (lane & 7)) * 128, y = (((lane >> 3) & 1) ^ (lane & 7)) << 4;
#pragma unroll
  for (int n = 0; n < 2; n++) { s[n][0] = 0.f; s[n][1] = 0.f; s[n][2] = 0.f; s[n][3] = 0.f; }
#pragma unroll
  for (int kk = 0; kk < DP / 16; kk++) {
    u32 a[4], r[4];
    const u32* av = a;
    if constexpr (QREG) av = qf[kk];
    else fz_att_ldsm4(a, qb + 2 * kk * 16, false);
    fz_att_ldsm4(r, base + (kk >> 2) * 2048 + ((((2 * kk) & 7) << 4) ^ y), false);
    const u32 b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
    fz_att_mma<BF>(s[0], av, b0);
    fz_att_mma<BF>(s[1], av, b1);
  }
}

// fz_att_pv_sw is fz_att_pv over a decode tile of 16 values in the
// swizzled layout at shared address v (all NP pairs of the head dim).
template <int NP, bool BF>
FZ_DEV void fz_att_pv_sw(float (&o)[2 * NP][4], const u32 (&p)[1][4], u32 v, int lane) {
  const u32 base = v + ((lane & 7) + (((lane >> 3) & 1) << 3)) * 128, y = ((lane >> 4) ^ (lane & 7)) << 4;
#pragma unroll
  for (int i = 0; i < NP; i++) {
    u32 r[4];
    fz_att_ldsm4(r, base + (i >> 2) * 2048 + ((((2 * i) & 7) << 4) ^ y), true);
    const u32 b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
    fz_att_mma<BF>(o[2 * i], p[0], b0);
    fz_att_mma<BF>(o[2 * i + 1], p[0], b1);
  }
}

// fz_att_lsum completes the row sums l over the quad sharing each row.
FZ_DEV void fz_att_lsum(float (&l)[2]) {
#pragma unroll
  for (int h = 0; h < 2; h++) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
  }
}

// fz_att_cp copies n (1 to 8) 16-bit elements of a row chunk at src to
// the 16-byte shared chunk dst, zero-filled past n: one cp.async when the
// chunk is whole and aligned.
FZ_DEV void fz_att_cp(u16* dst, const u16* src, int n) {
  if (n == 8 && fz_aligned(src, 16)) {
    fz_cp16b(dst, src, 16);
    return;
  }
  u32 x[4];
#pragma unroll
  for (int i = 0; i < 4; i++) x[i] = (2 * i < n ? (u32)src[2 * i] : 0u) | ((2 * i + 1 < n ? (u32)src[2 * i + 1] : 0u) << 16);
  *(uint4*)dst = make_uint4(x[0], x[1], x[2], x[3]);
}

// fz_att_lrow is a lane's row of a decode tile: lane l addresses key
// j0 + l % 16 of K (l < 16) or V (l >= 16). A key at jend or later takes the
// tile's last existing key's row and is marked missing, so that its copies
// zero-fill.
struct fz_att_lrow {
  const u16* p;
  bool ok;
};

// fz_att_keycp copies the word that addressing key j's row reads (the
// context's rkeyp: a page-table entry; 0 where there is none) to dst, by
// cp.async; a key at jend or later takes the last existing key's. The
// decode loop fetches these words into shared memory tiles ahead, so that
// forming a row (fz_att_lanerow, from the word) never waits on a global
// read.
template <class C>
FZ_DEV void fz_att_keycp(const C& c, int* dst, i64 b, i64 g, i64 npre, i64 j, i64 jend) {
  fz_cp4(dst, c.rkeyp(b, g, j < jend ? j : jend - 1, npre));
}

// fz_att_lanerow addresses the lane's row of the tile of keys j0 .. j0 + 15
// (j0 < jend) of sequence b, kv head g from the word key its address reads.
template <class C>
FZ_DEV fz_att_lrow fz_att_lanerow(const C& c, int key, int lane, i64 b, i64 g, i64 npre, i64 j0, i64 jend) {
  const i64 j = j0 + (lane & 15), jj = j < jend ? j : jend - 1;
  return {c.rrow(key, lane >> 4, b, g, jj, npre), j < jend};
}

// fz_att_wtile is one warp's load of a decode tile from the lanes' rows r
// (fz_att_lanerow) to sk (K) and sv (V): in rows padded to DP + 8 elements,
// or (SW) in the swizzle of the tensor copy engine (fz_att_swz; head dims
// of whole 128-byte lines), for the tiles the engine does not fill. Lane l
// copies the 16-byte chunks l, l + 32, ... of each, so that every copy
// instruction reads whole rows back to back; the row addresses come from
// the lanes holding them (shuffles). Rows that are all 16-byte aligned, of
// a head dim that is a multiple of 16 (and divides 256), go by cp.async
// with the missing rows zero-filled; others chunk by chunk with zeros past
// DH. The caller commits the group. With VO (keys stored transposed,
// whose K tile fz_att_ttile loads) it loads the V tile alone; lanes 0-15
// then address the keys' columns, which need no alignment.
template <int DH, int DP, bool SW, bool VO = false>
FZ_DEV void fz_att_wtile(const fz_att_lrow& r, u16* sk, u16* sv, int lane) {
  constexpr int CH = DP / 8, LDS = DP + 8, NE = 16 * CH;
  static_assert(!SW || DH % 64 == 0, "swizzled tiles are rows of whole 128-byte lines");
  // The byte offset of chunk ch of a row in a tile.
  const auto at = [](int row, int ch) { return SW ? fz_att_swz(row, ch) : (u32)((row * LDS + ch * 8) * 2); };
  if (DH == DP && 32 % CH == 0 && __all_sync(0xffffffffu, (VO && lane < 16) || fz_aligned(r.p, 16))) {
    // The row address with bit 0 set for a missing row (aligned: free).
    const u64 pm = (u64)r.p | (r.ok ? 0u : 1u);
    const u32 sa = VO ? 0u : fz_smem_addr(sk), sb = fz_smem_addr(sv);
#pragma unroll
    for (int e0 = 0; e0 < NE; e0 += 32) {
      const int row = (e0 + lane) / CH, ch = (e0 + lane) % CH;
      const u64 k = VO ? 0u : __shfl_sync(0xffffffffu, pm, row), v = __shfl_sync(0xffffffffu, pm, 16 + row);
      if constexpr (!VO) fz_cp16s(sa + at(row, ch), (const u16*)(k & ~(u64)1) + ch * 8, k & 1 ? 0 : 16);
      fz_cp16s(sb + at(row, ch), (const u16*)(v & ~(u64)1) + ch * 8, v & 1 ? 0 : 16);
    }
    return;
  }
#pragma unroll 1
  for (int e0 = 0; e0 < NE; e0 += 32) {
    const int e = e0 + lane, row = e / CH, ch = e - row * CH, n = DH - ch * 8 < 8 ? DH - ch * 8 : 8;
    const u16* const k = (const u16*)__shfl_sync(0xffffffffu, (u64)r.p, row & 15);
    const u16* const v = (const u16*)__shfl_sync(0xffffffffu, (u64)r.p, 16 + (row & 15));
    const bool ok = __shfl_sync(0xffffffffu, r.ok, row & 15);
    if (e >= NE) continue;
    u16* const dv = (u16*)((char*)sv + at(row, ch));
    if constexpr (VO) {
      if (ok && n > 0) fz_att_cp(dv, v + ch * 8, n);
      else *(uint4*)dv = make_uint4(0u, 0u, 0u, 0u);
      continue;
    }
    u16* const dk = (u16*)((char*)sk + at(row, ch));
    if (ok && n > 0) {
      fz_att_cp(dk, k + ch * 8, n);
      fz_att_cp(dv, v + ch * 8, n);
    } else {
      *(uint4*)dk = make_uint4(0u, 0u, 0u, 0u);
      *(uint4*)dv = make_uint4(0u, 0u, 0u, 0u);
    }
  }
}

// fz_att_ttile stages a K tile of BC keys stored transposed (C::KEYST)
// into s: DP rows of BC keys (fz_att_swt), each 16-byte chunk 8
// consecutive keys of one dim from the tile's first key's column k0 (dim
// d c.kdo(d) further), by cp.async where whole and aligned (the caller
// commits the group). Of the tile's keys the first nk exist: the others,
// and dims past DH, read nothing and stage zeros, as fz_att_tile's rows
// do. Block-wide (NT threads, tid threadIdx.x), or one warp's (NT 32, tid
// the lane).
template <int DH, int DP, int BC, int NT, class C>
FZ_DEV void fz_att_ttile(const C& c, u16* s, const u16* k0, int nk, int tid) {
  constexpr int CH = BC / 8;
#pragma unroll 1
  for (int e0 = 0; e0 < DP * CH; e0 += NT) {
    const int e = e0 + tid;
    if ((DP * CH) % NT == 0 || e < DP * CH) {
      const int d = e / CH, ch = e - d * CH, n = nk - ch * 8 < 8 ? nk - ch * 8 : 8;
      u16* const dst = s + fz_att_swt<BC>(d, ch);
      if (d < DH && n > 0) fz_att_cp(dst, k0 + c.kdo(d) + ch * 8, n);
      else *(uint4*)dst = make_uint4(0u, 0u, 0u, 0u);
    }
  }
}

// fz_att_bulk_tile copies the tile of the lanes' rows r to the swizzled
// tiles at sk (K) and sk + 16 * DH (V) by the tensor copy engine (one
// thread; the map whose address is at *g, of base tb, completing on the
// mbarrier at bar) when tb is 16-byte aligned (the host encodes no map
// otherwise: runtime.RowMap), the tile's 16 keys all exist, and their K and
// their V rows are 16 consecutive rows at whole-row offsets from tb.
// Returns whether it did (the same in every lane); otherwise the caller
// loads the tile.
template <int DH>
FZ_DEV bool fz_att_bulk_tile(const fz_att_lrow& r, const u16* tb, u16* sk, const fz_tmap* const* g, u32 bar, int lane) {
  if (!fz_aligned(tb, 16)) return false;
  const u64 p = (u64)r.p, k0 = __shfl_sync(0xffffffffu, p, 0), v0 = __shfl_sync(0xffffffffu, p, 16);
  const bool seq = r.ok && p == (lane < 16 ? k0 : v0) + (u64)(lane & 15) * (DH * 2);
  // Byte offsets from the base; below it they wrap past the limit.
  const u64 ok = k0 - (u64)tb, ov = v0 - (u64)tb, lim = (u64)(FZ_ATT_TROWS - 16) * (DH * 2);
  if (!__all_sync(0xffffffffu, seq) || ok % (DH * 2) != 0 || ov % (DH * 2) != 0 || ok > lim || ov > lim) return false;
  if (lane == 0) fz_att_tma_kv<DH>(fz_smem_addr(sk), fz_smem_addr(sk + 16 * DH), *g, (int)(ok / (DH * 2)), (int)(ov / (DH * 2)), bar);
  return true;
}

// fz_att_ldcg and fz_att_ldcg2 read one and two floats through L2 (where
// other blocks wrote them); volatile, so that they stay after the fence of
// fz_att_arrive.
FZ_DEV float fz_att_ldcg(const float* p) { float v; asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p)); return v; }
FZ_DEV float2 fz_att_ldcg2(const float* p) { float2 v; asm volatile("ld.global.cg.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "l"(p)); return v; }

// fz_att_arrive counts a block's arrival at ctr once all its threads'
// partials are written (call it from one thread after a block barrier):
// release, so the partials are visible before the count, and acquire, so
// the block that counts last sees every other block's. Returns the count
// before it.
FZ_DEV unsigned int fz_att_arrive(unsigned int* ctr) {
  unsigned int old;
  asm volatile("fence.acq_rel.gpu;\n\tatom.relaxed.gpu.global.add.u32 %0, [%1], 1;\n\tfence.acq_rel.gpu;" : "=r"(old) : "l"(ctr) : "memory");
  return old;
}

// fz_att_merge combines ns partials (m, l, unnormalised o: rows of DH + 2
// floats, slot s of row r at pb + (s * R + r) * (DH + 2)) of nr rows into
// the output rows of kv head g, sequence b (S queries a head), from row rt,
// with the log-sum-exp merge in slot order. A thread takes four elements of
// a row and runs the online merge over the slots in registers, MS slots a
// batch: a batch's reads go out before its merge, a slot past ns reading
// the batch's first again, so that the merge's time is one round trip to
// L2 a batch whatever ns is (an unrolled loop over the runtime count
// compiled to a load and a merge a slot: TestMergeLoadsNVRTC).
template <int DH, int NT, class C>
FZ_DEV void fz_att_merge(const C& c, const float* pb, i64 ns, i64 R, i64 S, i64 rt, int nr, i64 b, i64 g) {
  constexpr int RW = DH + 2, DQ = (DH + 3) / 4, MS = 16;
  const i64 st = R * RW;
  for (int e = threadIdx.x; e < nr * DQ; e += NT) {
    const int r = e / DQ, d = 4 * (e - r * DQ);
    float mx = -FZ_INF, ls = 0.f, a[4] = {0.f, 0.f, 0.f, 0.f};
    const float* p0 = pb + r * RW;
    for (i64 s0 = 0; s0 < ns; s0 += MS, p0 += MS * st) {
      float2 ml[MS], x[MS], y[MS];
#pragma unroll
      for (int q = 0; q < MS; q++) {
        const float* p = s0 + q < ns ? p0 + q * st : p0;
        ml[q] = fz_att_ldcg2(p);
        if constexpr (DH % 4 == 0) {
          x[q] = fz_att_ldcg2(p + 2 + d);
          y[q] = fz_att_ldcg2(p + 4 + d);
        } else {
          x[q].x = fz_att_ldcg(p + 2 + d);
          x[q].y = d + 1 < DH ? fz_att_ldcg(p + 3 + d) : 0.f;
          y[q].x = d + 2 < DH ? fz_att_ldcg(p + 4 + d) : 0.f;
          y[q].y = d + 3 < DH ? fz_att_ldcg(p + 5 + d) : 0.f;
        }
      }
#pragma unroll
      for (int q = 0; q < MS; q++) {
        if (s0 + q < ns) {
          const float mn = fmaxf(mx, ml[q].x), mu = mn == -FZ_INF ? 0.f : mn;
          const float fa = fz_att_ex2(mx - mu), fb = fz_att_ex2(ml[q].x - mu);
          ls = ls * fa + ml[q].y * fb;
          a[0] = a[0] * fa + x[q].x * fb;
          a[1] = a[1] * fa + x[q].y * fb;
          a[2] = a[2] * fa + y[q].x * fb;
          a[3] = a[3] * fa + y[q].y * fb;
          mx = mn;
        }
      }
    }
    const float inv = ls > 0.f ? 1.f / ls : 0.f;
    const i64 rr = rt + r, hh = g * C::GRP + rr / S, i = rr % S;
    c.ost2(b, hh, i, d, a[0] * inv, a[1] * inv);
    if (d + 2 < DH) c.ost2(b, hh, i, d + 2, a[2] * inv, a[3] * inv);
  }
}

// fz_att_split is how the decode divides item (sequence b, kv head g):
// its keys npre + own (ntot), of which the rows see [lo, hi); psl slots
// of the workspace taken by a cascade's prefix pass; nsp splits of chunk
// keys.
struct fz_att_split {
  i64 npre, ntot, lo, hi, psl, chunk, nsp;
};

// fz_att_splits computes item (b, g)'s fz_att_split over the launch's
// gridDim.x splits and the workspace's slots (see fz_att_decode).
template <int CHUNK, class C>
FZ_DEV fz_att_split fz_att_splits(const C& c, i64 b, i64 g, i64 S, i64 slots) {
  fz_att_split it;
  it.npre = c.npre(b, g);
  it.ntot = it.npre + c.nown(b, g);
  c.kbounds(it.ntot - S, it.ntot - 1, it.ntot, it.lo, it.hi);
  // A cascade's prefix the batch shares is the prefix pass's (C::PREFIX,
  // fz_att_prefix, launched before): its psl partials fill the first
  // slots, then this kernel's splits of the own keys.
  it.psl = 0;
  if constexpr (C::PREFIX) {
    i64 pch = 0;
    if ((it.psl = c.pslots(it.npre, slots, pch)) > 0) {
      it.lo = fz_max64(it.lo, it.npre);
      it.hi = fz_max64(it.hi, it.lo);
    }
  }
  const i64 osl = slots - it.psl, vis = it.hi - it.lo;
  i64 chunk = CHUNK > 0 ? (i64)CHUNK : ((vis + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
  chunk = fz_max64(chunk, 16);
  i64 nsp = vis > 0 ? (vis + chunk - 1) / chunk : 1;
  if (nsp > 1 && nsp > osl) {
    chunk = osl > 1 ? ((vis + osl - 1) / osl + 15) / 16 * 16 : fz_max64(vis, 16);
    nsp = (vis + chunk - 1) / chunk;
  }
  it.chunk = chunk;
  it.nsp = nsp;
  return it;
}

// fz_att_ahead asks L2 for the K and V rows of keys j0 .. j0 + n - 1 of
// item (b, g), the block's threads a line each in turn: every 64 elements
// of a row and its last one (a row need not start a line).
template <int DH, class C>
FZ_DEV void fz_att_ahead(const C& c, i64 b, i64 g, i64 npre, i64 j0, i64 n) {
  constexpr int L = DH / 64 + 1;
  for (i64 e = threadIdx.x; e < n * 2 * L; e += blockDim.x) {
    const i64 j = j0 + e / (2 * L);
    const int kv = (int)(e / L % 2), k = (int)(e % L);
    fz_prefetch_l2(c.rrow(0, kv, b, g, j, npre) + (k * 64 < DH ? k * 64 : DH - 1));
  }
}

// fz_att_decode is split-KV Flash-Decoding with the merge in the same
// launch. Block (split sp, kv head g, sequence b) takes the query rows of
// the head group, GRP heads × S queries (16 at a time: one m16 tile,
// normally all of them), against its split of the keys the rows can see:
// CHUNK keys when CHUNK > 0 (deterministic mode: the split depends only on
// the sequence, never on the batch), else the visible keys divided evenly
// over gridDim.x splits, rounded up to 16; a split count past the
// workspace's slots takes larger splits. Splits past gridDim.x are strided
// over the blocks.
//
// Inside the block each warp owns every NW-th tile of 16 keys of the
// split and streams its tiles through its own NSTG-stage ring in dynamic
// shared memory (NSTG - 1 tiles in flight while it computes one; no block
// barrier in the loop), with its own online softmax. Head dims of whole
// 128-byte lines (BULK) take the tensor copy engine (fz_att_bulk) through
// the tensor map the host encoded (c.tmap()): a warp's tile whose K and V
// rows are each 16 consecutive rows goes as two tensor copies completing
// on the stage's mbarrier; other tiles (the last, partial one; pages of
// fewer than 16 tokens) go by cp.async into the same swizzled layout. Other head
// dims, and keys stored transposed (C::KEYST: K tiles of DP rows of 16
// keys, fz_att_ttile), go by cp.async into padded rows. The warps'
// (m, l, o) are then combined through shared memory. With one split the
// block writes the output. Otherwise it writes its partial (m, l,
// unnormalised o) to the workspace; the last split to finish, counted with
// an atomic per (sequence, kv head, row tile), merges the partials in split
// order (the same result whichever block is last) and writes the output.
// Workspace: the counters (u32, zero at load and reset by the merging
// block) then [b][g][slot][row][2 + DH] floats.
template <int DH, int DP, int NT, int NSTG, int CHUNK, bool BF, class C>
FZ_DEV void fz_att_decode(const C& c, float* ws, i64 cap) {
  constexpr int NW = NT / 32, NN = DP / 8, NPAIR = DP / 16, LDS = DP + 8, WST = 2 * 16 * LDS, RW = DP + 2;
  // BULK's stages are TST elements, 1024-byte aligned (the swizzle's
  // period) inside the space of the padded ring.
  // Keys stored transposed (C::KEYST) are columns, not the rows the
  // host's map (codegen.RowMap) addresses: their tiles go by cp.async
  // (fz_att_ttile; its K tile fits a padded K tile's space). A box of 16
  // keys × Dh dims over K's [Dh][T] would have 32-byte inner rows, which
  // the 128-byte swizzle fz_att_swz assumes they are not: a second map
  // from the host and a second shared layout, left undone.
  constexpr bool BULK = FZ_TMA && DH % 64 == 0 && NW * NSTG >= 2 && !C::KEYST;
  constexpr int TST = 2 * 16 * DH;
  extern __shared__ __align__(16) u16 fz_att_dsm[];
  __shared__ int fz_att_last;
  // The tensor map's address, read from here where a copy is issued rather
  // than held in registers.
  __shared__ const fz_tmap* fz_att_map;
  __shared__ __align__(8) u64 fz_att_bar[BULK ? NW * NSTG : 1];
  // Each warp's ring of its tiles' row words (C::KEYS: the page-table
  // entries), KR tiles of 16, fetched NSTG tiles ahead of the tiles' copies.
  constexpr int KR = 2 * NSTG - 1 > NSTG + 1 ? 2 * NSTG - 1 : NSTG + 1;
  __shared__ int fz_att_keys[C::KEYS ? NW * KR * 16 : 1];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gr = lane >> 2, tq = lane & 3;
  u16* const st = BULK ? (u16*)(((u64)fz_att_dsm + 1023) & ~(u64)1023) + warp * NSTG * TST : fz_att_dsm + warp * NSTG * WST;
  u16* const sq = fz_att_dsm + NW * NSTG * WST;
  float* const red = (float*)fz_att_dsm;
  const i64 B = c.nb(), G = c.ng(), S = c.nsq(), R = (i64)C::GRP * S;
  if (R == 0) {
    fz_grid_sync(); // so that this kernel ends after the one before it
    return;
  }
  const i64 nrt = (R + 15) / 16, ncnt = (B * G * nrt + 3) / 4 * 4, per = B * G * R * (DH + 2);
  const i64 slots = cap > ncnt && per > 0 ? (cap - ncnt) / per : 0;
  unsigned int* const cnt = (unsigned int*)ws;
  float* const part = ws + ncnt;
  // The warps' stage barriers: tmask marks the stages the engine fills,
  // phase their barriers' parities.
  u32 tmask = 0, phase = 0;
  if (BULK && lane == 0) {
    for (int i = 0; i < NSTG; i++) fz_mbar_init(fz_smem_addr(&fz_att_bar[warp * NSTG + i]), 1);
  }
  __syncwarp();
  // load stages the tile of the lanes' rows r in stage s of the warp's ring.
  const auto load = [&](const fz_att_lrow& r, int s) {
    if constexpr (BULK) {
      u16* const sk = st + s * TST;
      if (fz_att_bulk_tile<DH>(r, c.tbase(), sk, &fz_att_map, fz_smem_addr(&fz_att_bar[warp * NSTG + s]), lane)) {
        tmask |= 1u << s;
      } else {
        tmask &= ~(1u << s);
        fz_att_wtile<DH, DP, true>(r, sk, sk + 16 * DH, lane);
      }
    } else if constexpr (C::KEYST) {
      // Lane 0's row is the column of the tile's first key, which exists;
      // the keys that exist are those of the lanes 0-15 whose rows are.
      const u16* const k0 = (const u16*)__shfl_sync(0xffffffffu, (u64)r.p, 0);
      fz_att_ttile<DH, DP, 16, 32>(c, st + s * WST, k0, __popc(__ballot_sync(0xffffffffu, r.ok) & 0xffffu), lane);
      fz_att_wtile<DH, DP, false, true>(r, st + s * WST, st + s * WST + 16 * LDS, lane);
    } else {
      fz_att_wtile<DH, DP, false>(r, st + s * WST, st + s * WST + 16 * LDS, lane);
    }
  };
  // The splits of item (b, g): keys [lo, hi) in nsp chunks.
  const auto items = [&](i64 b, i64 g) { return fz_att_splits<CHUNK>(c, b, g, S, slots); };
  // Before it waits for the kernel before it, the block asks L2 for the
  // first keys and values of its first split, its share of FZ_L2_AHEAD
  // (a pure hint: the rows are read after the wait).
  if constexpr (C::AHEAD) {
    if (blockIdx.z < B && blockIdx.y < G) {
      const fz_att_split it = items(blockIdx.z, blockIdx.y);
      const i64 j0 = it.lo + blockIdx.x * it.chunk, j1 = fz_min64(it.hi, j0 + it.chunk);
      const i64 n = fz_min64(j1 - j0, fz_l2_ahead_share((i64)(2 * DH * 2)));
      fz_att_ahead<DH>(c, blockIdx.z, blockIdx.y, it.npre, j0, n);
    }
  }
  // The workspace's address, read before the wait.
  fz_prefetch_l2(ws);
  fz_grid_sync();
  for (i64 b = blockIdx.z; b < B; b += gridDim.z) {
    for (i64 g = blockIdx.y; g < G; g += gridDim.y) {
      const fz_att_split it = items(b, g);
      const i64 npre = it.npre, ntot = it.ntot, lo = it.lo, hi = it.hi, psl = it.psl, chunk = it.chunk, nsp = it.nsp;
      for (i64 sp = blockIdx.x; sp < nsp; sp += gridDim.x) {
        const i64 j0 = lo + sp * chunk, j1 = fz_min64(hi, j0 + chunk);
        const int ntile = (int)((j1 - j0 + 15) / 16);
        const int mine = ntile > warp ? (ntile - warp + NW - 1) / NW : 0;
        for (i64 rt = 0; rt < R; rt += 16) {
          i64 pos[2];
          decltype(fz_att_brow(c, 0, 0, 0, false)) br[2];
#pragma unroll
          for (int h = 0; h < 2; h++) {
            const i64 r = rt + gr + 8 * h, rr = r < R ? r : R - 1;
            pos[h] = ntot - S + rr % S;
            br[h] = fz_att_brow(c, b, g * C::GRP + rr / S, rr % S, r < R);
          }
          float o[NN][4], m[2] = {-FZ_INF, -FZ_INF}, l[2] = {0.f, 0.f};
#pragma unroll
          for (int i = 0; i < NN; i++) { o[i][0] = 0.f; o[i][1] = 0.f; o[i][2] = 0.f; o[i][3] = 0.f; }
          // The tensor map's address for the copies (here rather than before
          // the wait: there the Dh 256 kernels spilled a register).
          if (BULK && threadIdx.x == 0) {
            fz_att_map = c.tmap();
            fz_tmap_prefetch(c.tmap());
          }
          __syncthreads(); // the shared memory's last readers are done
          // The query rows to shared memory (zeros past R and DH) in 16-byte
          // chunks, by cp.async where whole and aligned: they join the
          // first tile's group, so that their latency overlaps the first
          // tiles'.
          for (int e = threadIdx.x; e < 16 * (DP / 8); e += NT) {
            const int r = e / (DP / 8), ch = e - r * (DP / 8), n = DH - ch * 8 < 8 ? DH - ch * 8 : 8;
            const i64 rr = rt + r;
            u16* const dq = sq + r * LDS + ch * 8;
            if (rr < R && n > 0) fz_att_cp(dq, c.qrow(b, g * C::GRP + rr / S, rr % S) + ch * 8, n);
            else *(uint4*)dq = make_uint4(0u, 0u, 0u, 0u);
          }
          const auto tile0 = [&](int i) { return j0 + (i64)(warp + i * NW) * 16; };
          // keys(i) fetches the row words of the warp's tile i (lanes 0-15,
          // a row each), row(i) is the lane's row of it. The words of tiles
          // 0 .. 2 NSTG - 2 come first, at once; then, in the loop, those of
          // tile i + 2 NSTG - 1 join the group of tile i + NSTG - 1's copy,
          // which the waits have completed by the time it is copied.
          const auto keys = [&](int i) {
            if (C::KEYS && lane < 16 && i < mine) fz_att_keycp(c, &fz_att_keys[(warp * KR + i % KR) * 16 + lane], b, g, npre, tile0(i) + lane, j1);
          };
          const auto row = [&](int i) {
            return fz_att_lanerow(c, C::KEYS ? fz_att_keys[(warp * KR + i % KR) * 16 + (lane & 15)] : 0, lane, b, g, npre, tile0(i), j1);
          };
          if constexpr (C::KEYS) {
#pragma unroll 1
            for (int i = 0; i < 2 * NSTG - 1; i++) keys(i);
            fz_cp_commit();
            fz_cp_wait<0>();
            __syncwarp();
          }
#pragma unroll 1
          for (int i = 0; i < NSTG - 1; i++) {
            if (i < mine) load(row(i), i);
            fz_cp_commit();
          }
          fz_cp_wait<NSTG - 2>(); // the query rows' group
          __syncthreads(); // the query rows
          // Up to a head dim of 128 the query's A fragments stay in
          // registers; past it, and with the copy engine (whose tile
          // handling needs those registers), they are read from shared
          // memory per tile.
          constexpr bool QREG = DP <= 128 && !BULK;
          u32 qf[QREG ? DP / 16 : 1][4];
          if constexpr (QREG) fz_att_qfrag<DP>(qf, sq, lane);
          int cur = 0, nxt = NSTG - 1;
          for (int i = 0; i < mine; i++) {
            if (i + NSTG - 1 < mine) {
              load(row(i + NSTG - 1), nxt);
              keys(i + 2 * NSTG - 1);
            }
            fz_cp_commit();
            fz_cp_wait<NSTG - 1>();
            if (BULK && (tmask >> cur & 1u)) {
              fz_mbar_wait(fz_smem_addr(&fz_att_bar[warp * NSTG + cur]), phase >> cur & 1u);
              phase ^= 1u << cur;
            }
            __syncwarp();
            const u16* sk = st + cur * (BULK ? TST : WST);
            const i64 k0 = tile0(i);
            float s[2][4];
            u32 p[1][4];
            if constexpr (C::KEYST) fz_att_qkt<DP, 16, QREG, BF>(s, qf, sq, sk, lane);
            else if constexpr (BULK) fz_att_qk_sw<DP, QREG, BF>(s, qf, sq, fz_smem_addr(sk), lane);
            else if constexpr (QREG) fz_att_qk<DP, 16, BF>(s, qf, sk, lane);
            else fz_att_qks<DP, 16, BF>(s, sq, sk, lane);
            const bool mask = k0 + 16 > j1 || c.tile_masked(ntot - S, ntot - 1, k0, k0 + 16);
            // Lazy rescaling up to a head dim of 128: past it the accumulators
            // hold 128 registers and its extra live maxima spilled (Gemma-2's
            // windowed, soft-capped Dh 256); the rescale it skips is then
            // 128 multiplies a lane per 16 keys, against 16 KB read.
            fz_att_online<16, NN, BF>(c, s, m, l, o, p, pos, br, k0, j1, mask, tq, DH <= 128);
            if constexpr (BULK) fz_att_pv_sw<NPAIR, BF>(o, p, fz_smem_addr(sk + 16 * DH), lane);
            else fz_att_pv<DP, 16, NPAIR, BF>(o, p, sk + 16 * LDS, lane, 0, 1);
            __syncwarp();
            cur = cur + 1 == NSTG ? 0 : cur + 1;
            nxt = nxt + 1 == NSTG ? 0 : nxt + 1;
          }
          fz_cp_wait<0>();
          fz_att_lsum(l);
          __syncthreads(); // every warp is done with its ring: red reuses it
#pragma unroll
          for (int h = 0; h < 2; h++) {
            float* rw = red + (warp * 16 + gr + 8 * h) * RW;
            if (tq == 0) { rw[0] = m[h]; rw[1] = l[h]; }
#pragma unroll
            for (int n = 0; n < NN; n++) { rw[2 + n * 8 + tq * 2] = o[n][2 * h]; rw[3 + n * 8 + tq * 2] = o[n][2 * h + 1]; }
          }
          __syncthreads();
          // The block's result: the warps combined, element pairs (r, d).
          const int nr = (int)fz_min64(16, R - rt);
          constexpr int DH2 = (DH + 1) / 2;
          const i64 cid = (b * G + g) * nrt + rt / 16;
          float* const pb = part + ((b * G + g) * slots * R + rt) * (DH + 2);
          for (int e = threadIdx.x; e < nr * DH2; e += NT) {
            const int r = e / DH2, d = 2 * (e - r * DH2);
            float mx = -FZ_INF;
#pragma unroll
            for (int w = 0; w < NW; w++) mx = fmaxf(mx, red[(w * 16 + r) * RW]);
            float ls = 0.f, a0 = 0.f, a1 = 0.f;
            if (mx != -FZ_INF) {
#pragma unroll
              for (int w = 0; w < NW; w++) {
                const float* rw = red + (w * 16 + r) * RW;
                const float f = fz_att_ex2(rw[0] - mx);
                ls += rw[1] * f;
                a0 += rw[2 + d] * f;
                a1 += rw[3 + d] * f;
              }
            }
            const i64 rr = rt + r, hh = g * C::GRP + rr / S, i = rr % S;
            if (psl + nsp == 1) {
              const float inv = ls > 0.f ? 1.f / ls : 0.f;
              c.ost2(b, hh, i, d, a0 * inv, a1 * inv);
            } else {
              float* pp = pb + ((psl + sp) * R + r) * (DH + 2);
              if (d == 0) { pp[0] = mx; pp[1] = ls; }
              pp[2 + d] = a0;
              if (d + 1 < DH) pp[3 + d] = a1;
            }
          }
          if (psl + nsp == 1) continue;
          __syncthreads();
          if (threadIdx.x == 0) fz_att_last = fz_att_arrive(cnt + cid) == (unsigned int)(nsp - 1);
          __syncthreads();
          if (!fz_att_last) continue;
          // The merge, in slot order (the same result whichever block is last).
          fz_att_merge<DH, NT>(c, pb, psl + nsp, R, S, rt, nr, b, g);
          if (threadIdx.x == 0) cnt[cid] = 0u;
        }
      }
    }
  }
}

// fz_att_prefill is FlashAttention-2. Block (query tile, head h, sequence
// b) takes query tiles of BR = 16 × warps / WPR rows (strided over
// gridDim.x) against the key tiles the tile's rows can see (causal: up to
// the diagonal tile; window: from the first query's window), BC keys at a
// time: the K tile of the next step loads while P·V runs, the V tile while
// the scores run. Each 16-row slice of the tile belongs to WPR warps, which
// split the head dim of P·V between them (and each compute the slice's
// scores: WPR > 1 keeps the output accumulators of large head dims in
// registers). A warp skips the tiles none of its rows sees, and masks
// element by element only in the tiles that cross a boundary. Keys stored
// transposed (C::KEYST) are staged as stored (fz_att_ttile, fz_att_qkt).
template <int DH, int DP, int BC, int NT, int WPR, bool BF, class C>
FZ_DEV void fz_att_prefill(const C& c) {
  constexpr int NW = NT / 32, BR = 16 * (NW / WPR), NKS = DP / 16, NPAIR = DP / 16, NP = (NPAIR + WPR - 1) / WPR, LDS = DP + 8;
  __shared__ __align__(16) u16 sK[BC * LDS];
  __shared__ __align__(16) u16 sV[BC * LDS];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gr = lane >> 2, tq = lane & 3;
  const int rw = warp / WPR, ds = warp % WPR;
  const i64 B = c.nb(), H = c.nh(), S = c.nsq();
  const i64 nqt = (S + BR - 1) / BR;
  for (i64 b = blockIdx.z; b < B; b += gridDim.z) {
    for (i64 h = blockIdx.y; h < H; h += gridDim.y) {
      const i64 g = h / C::GRP;
      const i64 npre = c.npre(b, g), ntot = npre + c.nown(b, g), p0 = ntot - S;
      for (i64 qt = blockIdx.x; qt < nqt; qt += gridDim.x) {
        const i64 q0 = qt * BR, qn = fz_min64(S - q0, BR);
        i64 lo, hi;
        c.kbounds(p0 + q0, p0 + q0 + qn - 1, ntot, lo, hi);
        const i64 w0 = q0 + rw * 16, wl = fz_min64(w0 + 15, S - 1);
        const bool rows = w0 < S;
        i64 wlo = 0, whi = 0;
        if (rows) c.kbounds(p0 + w0, p0 + wl, ntot, wlo, whi);
        i64 pos[2];
        decltype(fz_att_brow(c, 0, 0, 0, false)) br[2];
        u32 qf[NKS][4];
        {
          const u16* q[2];
#pragma unroll
          for (int hh = 0; hh < 2; hh++) {
            const i64 i = w0 + gr + 8 * hh;
            pos[hh] = p0 + (i < S ? i : S - 1);
            q[hh] = i < S ? c.qrow(b, h, i) : (const u16*)0;
            br[hh] = fz_att_brow(c, b, h, i, i < S);
          }
          fz_att_qrows<DH, DP>(qf, q, tq);
        }
        float o[2 * NP][4], m[2] = {-FZ_INF, -FZ_INF}, l[2] = {0.f, 0.f};
#pragma unroll
        for (int i = 0; i < 2 * NP; i++) { o[i][0] = 0.f; o[i][1] = 0.f; o[i][2] = 0.f; o[i][3] = 0.f; }
        u32 p[BC / 16][4];
        const int ntile = (int)((hi - lo + BC - 1) / BC);
        __syncthreads();
        if (ntile > 0) {
          if constexpr (C::KEYST) fz_att_ttile<DH, DP, BC, NT>(c, sK, c.row(0, b, g, lo, npre), (int)fz_min64(BC, hi - lo), threadIdx.x);
          else fz_att_tile<DH, DP, BC, NT>(c, sK, 0, b, g, npre, lo, hi);
        }
        fz_cp_commit();
        for (int t = 0; t < ntile; t++) {
          const i64 k0 = lo + (i64)t * BC;
          fz_cp_wait<0>();
          __syncthreads();
          fz_att_tile<DH, DP, BC, NT>(c, sV, 1, b, g, npre, k0, hi);
          fz_cp_commit();
          const bool act = rows && k0 < whi && k0 + BC > wlo;
          if (act) {
            float s[BC / 8][4];
            if constexpr (C::KEYST) fz_att_qkt<DP, BC, true, BF>(s, qf, sK, sK, lane);
            else fz_att_qk<DP, BC, BF>(s, qf, sK, lane);
            const bool mask = k0 + BC > hi || c.tile_masked(p0 + w0, p0 + wl, k0, k0 + BC);
            fz_att_online<BC, 2 * NP, BF>(c, s, m, l, o, p, pos, br, k0, hi, mask, tq);
          }
          fz_cp_wait<0>();
          __syncthreads();
          if (t + 1 < ntile) {
            if constexpr (C::KEYST) fz_att_ttile<DH, DP, BC, NT>(c, sK, c.row(0, b, g, k0 + BC, npre), (int)fz_min64(BC, hi - k0 - BC), threadIdx.x);
            else fz_att_tile<DH, DP, BC, NT>(c, sK, 0, b, g, npre, k0 + BC, hi);
          }
          fz_cp_commit();
          if (act) fz_att_pv<DP, BC, NP, BF>(o, p, sV, lane, ds, WPR);
        }
        fz_cp_wait<0>();
        fz_att_lsum(l);
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
          const i64 i = w0 + gr + 8 * hh;
          if (i >= S) continue;
          const float inv = l[hh] > 0.f ? 1.f / l[hh] : 0.f;
#pragma unroll
          for (int k = 0; k < NP; k++) {
            const int pr = ds + k * WPR;
            if (pr >= NPAIR) continue;
#pragma unroll
            for (int half = 0; half < 2; half++) {
              const int d = pr * 16 + half * 8 + tq * 2;
              if (d < DH) c.ost2(b, h, i, d, o[2 * k + half][2 * hh] * inv, o[2 * k + half][2 * hh + 1] * inv);
            }
          }
        }
      }
    }
  }
}

// Scratch of split-KV partials, sized for the plan's launch.
static __device__ float fz_workspace[66568];

// body of k02_attention_attention
struct fzb_581d916f0a617fec_ctx {
  const u16* p0;
  const u16* p1;
  u16* p2;
  i64 dim_B;
  i64 dim_S;
  i64 dim_T;
  const fz_tmap* p6;
  static constexpr int GRP = 4;
  // Whether a prefix pass attends the prefix the batch shares (fz_att_prefix).
  static constexpr bool PREFIX = false;
  // Batch, query heads, kv heads, queries per sequence.
  __device__ __forceinline__ i64 nb() const { return dim_B; }
  __device__ __forceinline__ i64 nh() const { return 32; }
  __device__ __forceinline__ i64 ng() const { return 8; }
  __device__ __forceinline__ i64 nsq() const { return dim_S; }
  // Keys of sequence b: the shared prefix's, then its own.
  __device__ __forceinline__ i64 npre(i64 b, i64 g) const { return 0; }
  __device__ __forceinline__ i64 nown(i64 b, i64 g) const { return (dim_S + dim_T); }
  // Row of key j (prefix keys first) of K (c = 0) or V (c = 1); rkeyp is
  // the address of the word it reads (a page-table entry; null for
  // unpaged keys), rrow the row from that word.
  static constexpr bool KEYS = false;
  static constexpr bool AHEAD = true;
  __device__ __forceinline__ const u16* row(int c, i64 b, i64 g, i64 j, i64 npre) const {
    const int* e = rkeyp(b, g, j, npre);
    return rrow(e ? *e : 0, c, b, g, j, npre);
  }
  __device__ __forceinline__ const int* rkeyp(i64 b, i64 g, i64 j, i64 npre) const { return nullptr; }
  __device__ __forceinline__ const u16* rrow(int key, int c, i64 b, i64 g, i64 j, i64 npre) const {
    return c == 0 ? (const u16*)(p1 + (((b*(1024*dim_S + 1024*dim_T)) + (g*(128*dim_S + 128*dim_T))) + (j*128))) : (const u16*)(p1 + ((((1024*dim_B*dim_S + 1024*dim_B*dim_T) + (b*(1024*dim_S + 1024*dim_T))) + (g*(128*dim_S + 128*dim_T))) + (j*128)));
  }
  // Whether K is stored transposed, a key a column of its buffer (its row
  // the address of its dim 0; dim d kdo(d) further).
  static constexpr bool KEYST = false;
  // Whether every key's K and V rows lie DH elements after the key before's
  // (one source, unpaged): the wgmma prefill's tensor maps.
  static constexpr bool KSEQ = true;
  // The base of the tensor maps: the lower of the own keys' and values' buffers.
  __device__ __forceinline__ const u16* tbase() const { return (const u16*)p1; }
  // The host-encoded tensor map of the rows from tbase() (codegen.RowMap), or null.
  __device__ __forceinline__ const fz_tmap* tmap() const { return p6; }
  // Query i of head h, and the output stores.
  __device__ __forceinline__ const u16* qrow(i64 b, i64 h, i64 i) const { return (const u16*)(p0 + (((b*(4096*dim_S)) + (h*128)) + (i*4096))); }
  __device__ __forceinline__ void ost(i64 b, i64 h, i64 i, int d, float v) const { fz_st_bf16(p2 + ((((b*(4096*dim_S)) + (h*128)) + (i*4096)) + d), v); }
  __device__ __forceinline__ void ost2(i64 b, i64 h, i64 i, int d, float v0, float v1) const {
    u16* p = p2 + ((((b*(4096*dim_S)) + (h*128)) + (i*4096)) + d);
    if (d + 1 < 128 && fz_aligned(p, 4)) { *(u32*)p = fz_pack_bf16(v0, v1); return; }
    ost(b, h, i, d, v0);
    if (d + 1 < 128) ost(b, h, i, d + 1, v1);
  }
  // Score modifier: softcap(score * scale), in log2 units.
  __device__ __forceinline__ float smod(float s) const { return s * 0.127517432f; }
  // Whether the mask has a window (the wgmma prefill sizes its warpgroups'
  // registers by it).
  static constexpr bool WINDOW = false;
  // Mask: whether a query sees a key delta positions before it (after it
  // when negative); distances are clamped to +-2^30.
  __device__ __forceinline__ bool visible(int delta) const { return delta >= 0; }
  // The keys [lo, hi) queries at positions pmin..pmax can see among n.
  __device__ __forceinline__ void kbounds(i64 pmin, i64 pmax, i64 n, i64& lo, i64& hi) const {
    lo = 0; hi = n;
    hi = fz_min64(hi, pmax + 1);
    if (hi < lo) hi = lo;
  }
  // Whether some query at pmin..pmax does not see some key of [k0, k1).
  __device__ __forceinline__ bool tile_masked(i64 pmin, i64 pmax, i64 k0, i64 k1) const { return k1 - 1 > pmin; }
  // Score bias: added to the scaled score before softcap (smodb).
  static constexpr bool BIAS = false;
};
FZ_DEV void fzb_581d916f0a617fec(const u16* __restrict__ p0, const u16* __restrict__ p1, u16* __restrict__ p2, i64 dim_B, i64 dim_S, i64 dim_T, const fz_tmap* __restrict__ p6) {
  const fzb_581d916f0a617fec_ctx c = {p0, p1, p2, dim_B, dim_S, dim_T, p6};
  fz_att_decode<128, 128, 128, 6, 0, true>(c, fz_workspace, (i64)(sizeof(fz_workspace) / sizeof(float)));
}
FZ_DEV void fzb_581d916f0a617fec_prefill(const u16* __restrict__ p0, const u16* __restrict__ p1, u16* __restrict__ p2, i64 dim_B, i64 dim_S, i64 dim_T, const fz_tmap* __restrict__ p6) {
  const fzb_581d916f0a617fec_ctx c = {p0, p1, p2, dim_B, dim_S, dim_T, p6};
  fz_grid_sync();
  fz_att_prefill<128, 128, 64, 128, 1, true>(c);
}

// entries
extern "C" __global__ void __launch_bounds__(128, 1) k02_attention_attention(const u16* __restrict__ v22, const u16* __restrict__ v9_kv, u16* __restrict__ v58_a, i64 dim_B, i64 dim_S, i64 dim_T, const __grid_constant__ fz_tmap tmap6) { fzb_581d916f0a617fec(v22, v9_kv, v58_a, dim_B, dim_S, dim_T, &tmap6); }
extern "C" __global__ void __launch_bounds__(128, 1) k02_attention_attention_prefill(const u16* __restrict__ v22, const u16* __restrict__ v9_kv, u16* __restrict__ v58_a, i64 dim_B, i64 dim_S, i64 dim_T, const __grid_constant__ fz_tmap tmap6) { fzb_581d916f0a617fec_prefill(v22, v9_kv, v58_a, dim_B, dim_S, dim_T, &tmap6); }
