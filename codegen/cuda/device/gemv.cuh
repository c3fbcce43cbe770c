/*
 * The CUDA-core GEMV tile (codegen/cuda/gemv.go instantiates it in every
 * matmul kernel): MR rows (1 to 8) of one unit against one tile of the
 * right operand's columns, over positions [k0, k1) of K, the sums left in
 * res[MR][C::TN] of shared memory. The context C (the kernel's @BODY@_ctx)
 * holds the kernel's parameters and says how its operands are read:
 *
 *   AT, BT            the left and right operands' element types;
 *   lda, lda8         load one, or 8 contiguous, elements of the left
 *   ldb, ldb8         operand (of the right one) as floats;
 *   unpackb           (RAW16 only) 8 16-bit elements of a uint4 as floats;
 *   a(ub, r, k)       the address of element (r, k) of unit ub's left
 *                     operand, b(ub, k, n) of element (k, n) of its right
 *                     operand;
 *   AK, BK, BN        whether the left operand's K axis, the right's K or
 *                     its N axis is contiguous in memory;
 *   AVEC, BVEC        the alignment, in bytes, of an 8-element vector load;
 *   RAW16             16-bit weights, kept raw (4 registers a row) until
 *                     their FMAs;
 *   TN                the tile's column slots: 32 with BK, else 256 or
 *                     a narrow launch's multiple of 16;
 *   STAGED            the left operand's positions a pass stages, over its
 *                     rows;
 *   BIG               more than 256 threads a block (fewer registers).
 *
 * scol holds the tile's columns (-1 for none), svec whether each group of 8
 * slots is 8 contiguous, aligned columns (BN). As stages the left operand as
 * f32, red takes the warps' partial sums of a row; both are shared memory.
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */
// fz_ld16_stream reads 16 bytes of a weight read once: past L1, with L2
// fetching the 256 bytes around it (bench/gemv_variants streams this way).
FZ_DEV uint4 fz_ld16_stream(const void* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// fz_gemv_kper is the positions of K a split of nsplit takes, a multiple
// of 8 (plan.GemvSplitRows is the Go twin).
FZ_DEV i64 fz_gemv_kper(i64 kv, i64 nsplit) { return ((kv + nsplit - 1) / nsplit + 7) / 8 * 8; }

// fz_gemv_stage_a stages positions kc .. kc+kl-1 of rows r0 .. r0+MR-1 of
// the left operand into As[MR][KC] as f32, zeros past mr and kl.
template <class C, int MR, int KC>
FZ_DEV void fz_gemv_stage_a(const C& c, const i64 ub, const i64 r0, const int mr, const i64 kc, const int kl, float* As) {
  for (int e = threadIdx.x; e < MR * (KC / 8); e += blockDim.x) {
    const int m = e / (KC / 8), c8 = (e % (KC / 8)) * 8;
    float v[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    if (m < mr && c8 < kl) {
      const i64 kq0 = kc + c8;
      if constexpr (C::AK) {
        const typename C::AT* ap = c.a(ub, r0 + m, 0);
        if (c8 + 8 <= kl && fz_aligned(ap + kq0, C::AVEC)) C::lda8(v, ap + kq0);
        else for (int i = 0; i < 8 && c8 + i < kl; i++) v[i] = C::lda(ap + kq0 + i);
      } else {
        for (int i = 0; i < 8 && c8 + i < kl; i++) v[i] = C::lda(c.a(ub, r0 + m, kq0 + i));
      }
    }
    float4* dst = (float4*)(As + m * KC + c8);
    dst[0] = make_float4(v[0], v[1], v[2], v[3]); dst[1] = make_float4(v[4], v[5], v[6], v[7]);
  }
}

// fz_row8 is 8 columns of a weight row as floats.
struct fz_row8 { float v[8]; };

// fz_gemv_stream runs a row-major pass over a staged chunk of kl rows: the
// block reads nr * U rows a step, the thread the rows rl, rl + nr, ... of
// the block's nr row lanes (the U rows it has in flight lie nr rows
// apart), each by ld(kr) into a Row, then their FMAs, the Row's 8 values
// as floats by use(row, bi), with the staged left operand. Rows past the
// chunk load its last row again and are skipped by the FMAs, so that no
// load waits on a branch; a whole step runs its FMAs without a bounds
// test (a test per row lets ptxas sink each load to just before its
// row's FMAs).
template <int MR, int KC, int U, class Row, class Ld, class Use>
FZ_DEV void fz_gemv_stream(const int rl, const int nr, const i64 kc, const int kl, const float* As, float (&acc)[MR][8], Ld ld, Use use) {
  for (int kp = 0; kp < kl; kp += nr * U) {
    Row b[U];
#pragma unroll
    for (int i = 0; i < U; i++) {
      const int kb = kp + i * nr + rl;
      b[i] = ld(kc + (kb < kl ? kb : kl - 1));
    }
    auto fmas = [&](int i, int kb) {
      float bi[8];
      use(b[i], bi);
#pragma unroll
      for (int m = 0; m < MR; m++) {
        const float a = As[m * KC + kb];
#pragma unroll
        for (int c = 0; c < 8; c++) acc[m][c] = fmaf(a, bi[c], acc[m][c]);
      }
    };
    if (kp + nr * U <= kl) {
#pragma unroll
      for (int i = 0; i < U; i++) fmas(i, kp + i * nr + rl);
    } else {
      for (int i = 0; i < U; i++) {
        const int kb = kp + i * nr + rl;
        if (kb >= kl) break;
        fmas(i, kb);
      }
    }
  }
}

// fz_gemv_in_flight is the rows a warp of the row-major pass loads before
// their FMAs: 8, twice as many raw 16-byte rows (4 registers each against
// 8), half as many for eight rows of sums (MR > 4) or blocks of more than
// 256 threads.
template <class C, int MR, bool RAW>
static __host__ __device__ constexpr int fz_gemv_in_flight() {
  int u = RAW ? 16 : 8;
  if (C::BIG) u /= 2;
  return MR > 4 ? u / 2 : u;
}

// fz_gemv_tile computes the sums of rows r0 .. r0+mr-1 (mr <= MR) of unit
// ub over positions [k0, k1) for the tile's columns scol into res[MR][TN].
template <class C, int MR>
FZ_DEV void fz_gemv_tile(const C& c, const i64 ub, const i64 r0, const int mr, const i64 k0, const i64 k1, const i64* scol, const int* svec, float* As, float* red, float* res) {
  const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5, nw = blockDim.x >> 5;
  constexpr int KC = C::STAGED / MR, TN = C::TN;
  if constexpr (C::BK) {
    // A K-contiguous right operand: a warp per slot streams its row of K
    // with 16-byte loads.
    constexpr int SPW = TN / 8;
    float acc[MR][SPW];
#pragma unroll
    for (int m = 0; m < MR; m++)
#pragma unroll
      for (int i = 0; i < SPW; i++) acc[m][i] = 0.f;
    const typename C::BT* bcol[SPW];
    bool bvec[SPW];
#pragma unroll
    for (int i = 0; i < SPW; i++) {
      const i64 n = scol[wid + i * nw < TN ? wid + i * nw : 0];
      bcol[i] = c.b(ub, 0, fz_max64(n, 0));
      bvec[i] = n >= 0 && wid + i * nw < TN && fz_aligned(bcol[i] + k0, C::BVEC);
    }
    for (i64 kc = k0; kc < k1; kc += KC) {
      const int kl = (int)fz_min64(KC, k1 - kc);
      __syncthreads();
      fz_gemv_stage_a<C, MR, KC>(c, ub, r0, mr, kc, kl, As);
      __syncthreads();
      for (int kk = lane * 8; kk < kl; kk += 256) {
        float a[MR][8];
#pragma unroll
        for (int m = 0; m < MR; m++) {
          const float4 x0 = *(const float4*)(As + m * KC + kk), x1 = *(const float4*)(As + m * KC + kk + 4);
          a[m][0] = x0.x; a[m][1] = x0.y; a[m][2] = x0.z; a[m][3] = x0.w; a[m][4] = x1.x; a[m][5] = x1.y; a[m][6] = x1.z; a[m][7] = x1.w;
        }
#pragma unroll
        for (int i = 0; i < SPW; i++) {
          if (wid + i * nw >= TN || scol[wid + i * nw] < 0) continue;
          float b[8];
          if (bvec[i] && kk + 8 <= kl) C::ldb8(b, bcol[i] + kc + kk);
          else for (int j = 0; j < 8; j++) b[j] = kk + j < kl ? C::ldb(bcol[i] + kc + kk + j) : 0.f;
#pragma unroll
          for (int m = 0; m < MR; m++)
#pragma unroll
            for (int j = 0; j < 8; j++) acc[m][i] = fmaf(a[m][j], b[j], acc[m][i]);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < SPW; i++) {
#pragma unroll
      for (int m = 0; m < MR; m++) {
        const float v = fz_warp_sum(acc[m][i]);
        if (lane == 0 && wid + i * nw < TN) res[m * TN + wid + i * nw] = v;
      }
    }
    __syncthreads();
    return;
  } else {
    // Any other layout: a row of the tile is LPR lanes, lane group gl of
    // a row owning slots 8gl .. 8gl+7, and a warp reads RPW rows at once
    // (one row of 32 lanes at gemvRowTN slots; a narrow tile's rows are
    // shorter, so more of them), the block's nr row lanes in all. Lanes
    // past RPW rows load a row again and keep no sums. A tile whose lane
    // groups are 8 contiguous, aligned columns in every row takes
    // 8-element loads (16 bytes raw for 16-bit weights).
    constexpr int LPR = TN / 8, RPW = 32 / LPR;
    static_assert(TN % 8 == 0 && LPR <= 32, "a GEMV tile is 8-slot lane groups, at most a warp a row");
    const int gl = lane % LPR, own = lane < RPW * LPR, rl = wid * RPW + (own ? lane / LPR : RPW - 1), nr = nw * RPW;
    float acc[MR][8];
#pragma unroll
    for (int m = 0; m < MR; m++)
#pragma unroll
      for (int q = 0; q < 8; q++) acc[m][q] = 0.f;
    i64 col[8];
#pragma unroll
    for (int q = 0; q < 8; q++) col[q] = scol[gl * 8 + q];
    auto scalar = [&](i64 kr) {
      fz_row8 r;
      for (int q = 0; q < 8; q++) r.v[q] = col[q] >= 0 ? C::ldb(c.b(ub, kr, col[q])) : 0.f;
      return r;
    };
    auto floats = [](const fz_row8& r, float* bi) {
#pragma unroll
      for (int q = 0; q < 8; q++) bi[q] = r.v[q];
    };
    for (i64 kc = k0; kc < k1; kc += KC) {
      const int kl = (int)fz_min64(KC, k1 - kc);
      __syncthreads();
      fz_gemv_stage_a<C, MR, KC>(c, ub, r0, mr, kc, kl, As);
      __syncthreads();
      constexpr int UF = fz_gemv_in_flight<C, MR, false>();
      if constexpr (C::BN) {
        if (svec[gl] != 0 && fz_aligned(c.b(ub, 0, col[0]), C::BVEC) && fz_aligned(c.b(ub, 1, col[0]), C::BVEC)) {
          if constexpr (C::RAW16) {
            fz_gemv_stream<MR, KC, fz_gemv_in_flight<C, MR, true>(), uint4>(rl, nr, kc, kl, As, acc,
              [&](i64 kr) { return fz_ld16_stream(c.b(ub, kr, col[0])); },
              [](const uint4& r, float* bi) { C::unpackb(bi, r); });
          } else {
            fz_gemv_stream<MR, KC, UF, fz_row8>(rl, nr, kc, kl, As, acc,
              [&](i64 kr) { fz_row8 r; C::ldb8(r.v, c.b(ub, kr, col[0])); return r; }, floats);
          }
        } else {
          fz_gemv_stream<MR, KC, UF, fz_row8>(rl, nr, kc, kl, As, acc, scalar, floats);
        }
      } else {
        fz_gemv_stream<MR, KC, UF, fz_row8>(rl, nr, kc, kl, As, acc, scalar, floats);
      }
    }
    // The row lanes' partial sums of each row, summed in row-lane order.
#pragma unroll
    for (int m = 0; m < MR; m++) {
      __syncthreads();
      if (own) {
#pragma unroll
        for (int q = 0; q < 8; q++) red[rl * TN + gl * 8 + q] = acc[m][q];
      }
      __syncthreads();
      for (int s = tid; s < TN; s += blockDim.x) {
        float sum = 0.f;
        for (int r = 0; r < nr; r++) sum += red[r * TN + s];
        res[m * TN + s] = sum;
      }
    }
    __syncthreads();
  }
}

// fz_gemv_prefetch brings positions [k0, k1) of the tile's columns scol of
// unit ub's right operand into L2: a 64-byte line for every 32 columns of
// a row-major operand (a lane group's 8 columns are contiguous where it
// streams fast), every 64 positions of a K-contiguous one. It touches no
// memory: the lines are read after the kernel's wait.
template <class C>
FZ_DEV void fz_gemv_prefetch(const C& c, const i64 ub, const i64 k0, const i64 k1, const i64* scol) {
  if constexpr (C::BK) {
    for (i64 e = threadIdx.x; e < fz_cdiv64(k1 - k0, 64) * C::TN; e += blockDim.x) {
      const i64 n = scol[e % C::TN], kr = k0 + e / C::TN * 64;
      if (n >= 0) fz_prefetch_l2(c.b(ub, kr, n));
    }
  } else {
    constexpr int PER = (C::TN + 31) / 32;
    for (i64 e = threadIdx.x; e < (k1 - k0) * PER; e += blockDim.x) {
      const i64 n = scol[e % PER * 32], kr = k0 + e / PER;
      if (n >= 0) fz_prefetch_l2(c.b(ub, kr, n));
    }
  }
}

// fz_gemv_tc_ok reports, to every thread of the block, whether a chunk of
// mr rows from r0 may take the tensor-core GEMV: every 8-slot group of the
// tile is 8 contiguous, aligned columns or none, and the weight's rows and
// the chunk's rows of the left operand are 16-byte aligned (the rings of
// gemv_mma.cuh and gemv_wgmma.cuh copy 16 bytes at a time). C::GV_TN is
// the tensor-core tile's column slots.
template <class C>
FZ_DEV bool fz_gemv_tc_ok(const C& c, const i64 ub, const i64 r0, const int mr, const i64* scol, const int* svec) {
  bool ok = fz_aligned(c.b(ub, 0, 0), 16) && fz_aligned(c.b(ub, 1, 0), 16);
  if (threadIdx.x < C::GV_TN / 8 && svec[threadIdx.x] == 0) {
    for (int i = 0; i < 8; i++) ok = ok && scol[threadIdx.x * 8 + i] < 0;
  }
  if (threadIdx.x < mr) ok = ok && fz_aligned(c.a(ub, r0 + threadIdx.x, 0), 16);
  return __syncthreads_and(ok);
}
