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
// block reads nw * U rows a step, warp wid the rows wid, wid + nw, ... (the
// U rows a warp has in flight lie nw rows apart), each by ld(kr) into a
// Row, then their FMAs, the Row's 8 values as floats by use(row, bi), with
// the staged left operand. Rows past the chunk load its last row again and
// are skipped by the FMAs, so that no load waits on a branch; a whole step
// runs its FMAs without a bounds test (a test per row lets ptxas sink each
// load to just before its row's FMAs).
template <int MR, int KC, int U, class Row, class Ld, class Use>
FZ_DEV void fz_gemv_stream(const i64 kc, const int kl, const float* As, float (&acc)[MR][8], Ld ld, Use use) {
  const int wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
  for (int kp = 0; kp < kl; kp += nw * U) {
    Row b[U];
#pragma unroll
    for (int i = 0; i < U; i++) {
      const int kb = kp + i * nw + wid;
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
    if (kp + nw * U <= kl) {
#pragma unroll
      for (int i = 0; i < U; i++) fmas(i, kp + i * nw + wid);
    } else {
      for (int i = 0; i < U; i++) {
        const int kb = kp + i * nw + wid;
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
    // Any other layout: lane l owns slots 8l .. 8l+7 of the tile. A tile
    // whose lane groups are 8 contiguous, aligned columns in every row
    // takes 8-element loads (16 bytes raw for 16-bit weights).
    float acc[MR][8];
#pragma unroll
    for (int m = 0; m < MR; m++)
#pragma unroll
      for (int q = 0; q < 8; q++) acc[m][q] = 0.f;
    i64 col[8];
#pragma unroll
    for (int q = 0; q < 8; q++) col[q] = scol[lane * 8 + q];
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
        if (svec[lane] != 0 && fz_aligned(c.b(ub, 0, col[0]), C::BVEC) && fz_aligned(c.b(ub, 1, col[0]), C::BVEC)) {
          if constexpr (C::RAW16) {
            fz_gemv_stream<MR, KC, fz_gemv_in_flight<C, MR, true>(), uint4>(kc, kl, As, acc,
              [&](i64 kr) { return fz_ld16_stream(c.b(ub, kr, col[0])); },
              [](const uint4& r, float* bi) { C::unpackb(bi, r); });
          } else {
            fz_gemv_stream<MR, KC, UF, fz_row8>(kc, kl, As, acc,
              [&](i64 kr) { fz_row8 r; C::ldb8(r.v, c.b(ub, kr, col[0])); return r; }, floats);
          }
        } else {
          fz_gemv_stream<MR, KC, UF, fz_row8>(kc, kl, As, acc, scalar, floats);
        }
      } else {
        fz_gemv_stream<MR, KC, UF, fz_row8>(kc, kl, As, acc, scalar, floats);
      }
    }
    // The warps' partial sums of each row, summed in warp order.
#pragma unroll
    for (int m = 0; m < MR; m++) {
      __syncthreads();
#pragma unroll
      for (int q = 0; q < 8; q++) red[wid * TN + lane * 8 + q] = acc[m][q];
      __syncthreads();
      for (int s = tid; s < TN; s += blockDim.x) {
        float sum = 0.f;
        for (int w = 0; w < nw; w++) sum += red[w * TN + s];
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
    constexpr int PER = C::TN / 32;
    for (i64 e = threadIdx.x; e < (k1 - k0) * PER; e += blockDim.x) {
      const i64 n = scol[e % PER * 32], kr = k0 + e / PER;
      if (n >= 0) fz_prefetch_l2(c.b(ub, kr, n));
    }
  }
}
// fz_gemv_wg_woff is the byte offset in a stage of 16-byte chunk wc (the
// tile's columns 8wc .. 8wc+7) of weight row r; rows is the stage's rows.
FZ_DEV int fz_gemv_wg_woff(int r, int wc, int rows) { return (wc >> 3) * rows * 128 + r * 128 + (((wc & 7) ^ (r & 7)) << 4); }
// fz_gemv_wg_xoff is the byte offset in a stage of chunk c (positions
// 8c .. 8c+7) of left-operand row n; wbytes is the stage's weight tile.
FZ_DEV int fz_gemv_wg_xoff(int n, int c, int rows, int wbytes) { return wbytes + (n >> 3) * rows * 16 + c * 128 + (n & 7) * 16; }
// fz_wg_desc is a wgmma shared-memory matrix descriptor: the address, the
// leading and stride byte offsets (16-byte units) and the swizzle mode
// (0 none, 1 128-byte).
FZ_DEV u64 fz_wg_desc(u32 addr, u32 lbo, u32 sbo, u32 swz) {
  return (u64)((addr & 0x3ffffu) >> 4) | ((u64)(lbo >> 4) << 16) | ((u64)(sbo >> 4) << 32) | ((u64)swz << 62);
}
FZ_DEV void fz_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
FZ_DEV void fz_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
FZ_DEV void fz_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> FZ_DEV void fz_wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory"); }
// fz_wgmma_tn<N, BF16> accumulates into d (N/2 values a thread) the m64nNk16
// product of the M-major A at da and the K-major B at db.
template <int N, bool BF16> FZ_DEV void fz_wgmma_tn(float* d, u64 da, u64 db);
#define FZ_WGMMA_TN8(BF, T) \
  template <> __device__ __forceinline__ void fz_wgmma_tn<8, BF>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n8k16.f32." T "." T " {%0, %1, %2, %3}, %4, %5, p, 1, 1, 1, 0;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) \
      : "l"(da), "l"(db), "n"(1)); \
  }
FZ_WGMMA_TN8(true, "bf16")
FZ_WGMMA_TN8(false, "f16")
#undef FZ_WGMMA_TN8
#define FZ_WGMMA_TN16(BF, T) \
  template <> __device__ __forceinline__ void fz_wgmma_tn<16, BF>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n16k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 1, 0;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]) \
      : "l"(da), "l"(db), "n"(1)); \
  }
FZ_WGMMA_TN16(true, "bf16")
FZ_WGMMA_TN16(false, "f16")
#undef FZ_WGMMA_TN16
#define FZ_WGMMA_TN32(BF, T) \
  template <> __device__ __forceinline__ void fz_wgmma_tn<32, BF>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n32k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 1, 0;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]) \
      : "l"(da), "l"(db), "n"(1)); \
  }
FZ_WGMMA_TN32(true, "bf16")
FZ_WGMMA_TN32(false, "f16")
#undef FZ_WGMMA_TN32
#define FZ_WGMMA_TN64(BF, T) \
  template <> __device__ __forceinline__ void fz_wgmma_tn<64, BF>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 1, 0;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
      : "l"(da), "l"(db), "n"(1)); \
  }
FZ_WGMMA_TN64(true, "bf16")
FZ_WGMMA_TN64(false, "f16")
#undef FZ_WGMMA_TN64
#define FZ_WGMMA_TN128(BF, T) \
  template <> __device__ __forceinline__ void fz_wgmma_tn<128, BF>(float* d, u64 da, u64 db) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." T "." T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 1, 0;\n}\n" \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
      : "l"(da), "l"(db), "n"(1)); \
  }
FZ_WGMMA_TN128(true, "bf16")
FZ_WGMMA_TN128(false, "f16")
#undef FZ_WGMMA_TN128

// fz_gemv_wg_stage issues a warpgroup's wgmmas over one ring stage (rows
// positions, a multiple of 16; 8·NB rows of the left operand) as one
// group: da describes the stage's first m64 tile of the warpgroup's
// columns, db its left-operand rows, whose next 16 positions lie bstep
// descriptor units (16 bytes) on; the caller waits for the group before
// the stage is refilled.
template <int NB, bool BF16>
FZ_DEV void fz_gemv_wg_stage(float (*acc)[NB * 4], u64 da, u64 db, int rows, int bstep) {
  fz_wgmma_fence();
#pragma unroll
  for (int s = 0; s < rows / 16; s++) {
#pragma unroll
    for (int t = 0; t < 2; t++)
      fz_wgmma_tn<NB * 8, BF16>(acc[t], da + (u64)((t * rows * 128 + s * 16 * 128) >> 4), db + (u64)(s * bstep));
  }
  fz_wgmma_commit();
}

// fz_gemv_wg_store writes warpgroup wg's sums to res[n * tn + c]: row n of
// the left operand, column c of the tile.
template <int NB>
FZ_DEV void fz_gemv_wg_store(float (*acc)[NB * 4], float* res, int tn, int wg) {
  const int w = (threadIdx.x >> 5) & 3, g = (threadIdx.x & 31) >> 2, q = threadIdx.x & 3;
#pragma unroll
  for (int t = 0; t < 2; t++)
#pragma unroll
    for (int i = 0; i < NB * 4; i++)
      res[(8 * (i >> 2) + 2 * q + (i & 1)) * tn + 128 * wg + 64 * t + 16 * w + g + 8 * ((i >> 1) & 1)] = acc[t][i];
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
