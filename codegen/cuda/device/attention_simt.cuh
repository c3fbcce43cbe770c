/*
 * The CUDA-core attention kernel (codegen/cuda/attention.go instantiates it):
 * the fallback for the attention the tensor-core kernels of
 * attention_flash.cuh do not take (f32 or other dtypes, head dims they do
 * not handle), every product an f32 FMA. Four entries:
 *
 *   fz_att_simt_decode   split-KV decode: block (split, kv head g, sequence
 *                        b) attends its chunk of the keys, a multiple of
 *                        BC, for the GRP query heads of the group and every
 *                        query of each (GQA packing); with one split it
 *                        writes the output, otherwise the rows' (m, l, o)
 *                        partials to the workspace;
 *   fz_att_simt_merge    the splits' log-sum-exp merge: the blocks of the
 *                        first split column merge the rows of their group
 *                        (launched on the decode's grid, after it);
 *   fz_att_simt_prefill  tiled prefill: block (query block of QB, head h,
 *                        sequence b) attends every key;
 *   fz_att_simt_varlen   tiled prefill over packed queries: block (work
 *                        item, head h), the items the sequences' query
 *                        tiles of QB, each of one sequence's queries.
 *
 * The rows of a block are taken QP at a time (fz_att_simt_rows): the queries
 * staged as f32, pre-scaled; then tile after tile of BC keys: the first BC
 * threads find each key's source and the element offsets of its K and V
 * rows (krow), the block stages those rows as f32 (rows of DH + 4 floats;
 * fz_att_simt_tile), computes the scores (bias, softcap, mask), runs the
 * online softmax (a warp per row, a lane per key: running max m, sum l and
 * the rescale of the accumulators) and adds P·V to its accumulators, the
 * QP x DH elements spread over the threads. A causal mask bounds the keys a
 * pass of rows visits by the rows' positions (with a window, from below
 * too). Keys are numbered source after source (a cascade's prefix first);
 * the S queries are the last S positions: query i at tk - S + i of the tk
 * keys (packed queries: S the sequence's own, qlen(b)).
 *
 * The partials of split sp for query i of head h of sequence b are DH + 2
 * floats of the workspace, m, l, then o, at row (sp * B * H + b * H + h) *
 * S + i (fz_att_simt_part).
 *
 * The context C (the kernel's @BODY@_ctx) holds the kernel's parameters and
 * says how its tensors are read:
 *
 *   DH, NH, NG, GRP     the head dim, query heads, kv heads, query heads
 *                       per kv head;
 *   NSRC                the key sources;
 *   QP, BC, QB, NT      query rows a pass, keys a tile, queries a prefill
 *                       block, threads a block;
 *   SCALE, CAP          the score scale (applied to the queries) and the
 *                       softcap c of c * tanh(s / c) (0: none);
 *   CAUSAL, WINDOW      the causal mask, and whether it has a window of
 *                       window() keys (keys that many positions or more
 *                       before the query are masked);
 *   BIAS                whether a score bias is added to the scaled
 *                       score before softcap, with BSCALE its factor, BT
 *                       its element type, ldb its load as a float and
 *                       bias(b, h, i, j) the address of query i of head h
 *                       at key j (read only for the keys the mask leaves);
 *   nb(), nsq()         batch, queries a sequence (packed: every token);
 *   qlen(b)             packed queries only (the varlen entry): sequence
 *                       b's tokens, from the indptr;
 *   lens(b, n)          the keys of each source for sequence b into n;
 *   krow(b, g, t, n,    the source of key t (of all sources, n their key
 *   rk, rv)             counts) of kv head g, returned, and the element
 *                       offsets of its K and V rows in that source's
 *                       buffers kbuf(src), vbuf(src);
 *   KEYST, kdo(d)       whether K is stored transposed ([B, G, Dh, T]: rk
 *                       is then the offset of the key's dim 0, and kdo(d)
 *                       that of its dim d from there);
 *   KT, KVEC            the K and V element type, and the alignment in
 *                       bytes of an 8-element vector load of it;
 *   ldkv, ldkv8         load one, or 8 contiguous, K or V elements as
 *                       floats;
 *   QT, OT              the query and output element types;
 *   ldq, sto            load a query element as a float, store a float as
 *                       an output element;
 *   q(b, h, i, d)       the address of element d of query i of head h
 *   out(b, h, i, d)     of sequence b (packed: token indptr[b] + i), and of
 *                       that element of its output.
 *
 * A function given the context reads one of its fields: a member that
 * reads none is static, and a template passes the context on only to a
 * function that reads it. Passing it to one that does not costs the kernel
 * the non-coherent loads (ld.global.nc) of K and V that NVRTC otherwise
 * derives from the parameters' __restrict__.
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */

// ---- attention on CUDA cores: split-KV decode with the merge of its
// splits, tiled prefill (codegen/cuda/attention.go) ----

// fz_att_simt_part is the partial (m, l, o) of row row (of rows) of split
// sp in the workspace ws.
template <int DH>
FZ_DEV float* fz_att_simt_part(float* ws, i64 sp, i64 rows, i64 row) {
  return ws + (sp * rows + row) * (DH + 2);
}

// fz_att_simt_keys is the keys of a sequence: the sum of its sources' n.
template <int NSRC>
FZ_DEV i64 fz_att_simt_keys(const i64 (&n)[NSRC]) {
  i64 tk = 0;
  for (int i = 0; i < NSRC; i++) tk += n[i];
  return tk;
}

// fz_att_simt_masked reports whether the mask hides key j of the tk keys
// from query i of the sequence's sq (at tk - sq + i); w is the window
// (with C::WINDOW). It takes no context: a template passes the context
// only to a function that reads one of its fields (see above).
template <class C>
FZ_DEV bool fz_att_simt_masked(i64 tk, i64 sq, i64 w, i64 i, i64 j) {
  if constexpr (C::CAUSAL) {
    const i64 pos = tk - sq + i;
    if constexpr (C::WINDOW) return j > pos || j <= pos - w;
    return j > pos;
  }
  return false;
}

// fz_att_simt_tile stages the K and V rows of the tile's keys (srk, srv,
// ssrc) into sk and sv as f32 rows of KS floats: zeros for keys without
// rows. 8-element loads where the head dim allows.
template <class C, int KS>
FZ_DEV void fz_att_simt_tile(const C& c, const i64* srk, const i64* srv, const int* ssrc, float* sk, float* sv) {
  constexpr int DH = C::DH;
  if constexpr (C::KEYST) {
    // Keys stored transposed: consecutive threads read consecutive keys of
    // one dim (srk the offsets of the keys' dim 0), then the value rows.
    for (int e = threadIdx.x; e < C::BC * DH; e += blockDim.x) {
      const int col = e % C::BC, d = e / C::BC;
      const i64 rk = srk[col];
      sk[col * KS + d] = rk >= 0 ? C::ldkv(c.kbuf(ssrc[col]) + rk + c.kdo(d)) : 0.f;
    }
    for (int e = threadIdx.x; e < C::BC * DH; e += blockDim.x) {
      const int col = e / DH, d = e % DH;
      const i64 rv = srv[col];
      sv[col * KS + d] = rv >= 0 ? C::ldkv(c.vbuf(ssrc[col]) + rv + d) : 0.f;
    }
  } else if constexpr (DH % 8 == 0) {
    for (int e = threadIdx.x; e < C::BC * DH / 8; e += blockDim.x) {
      const int col = e / (DH / 8), d = (e % (DH / 8)) * 8;
      const i64 rk = srk[col], rv = srv[col]; const int src = ssrc[col];
      if (rk >= 0) {
        const typename C::KT* kp = c.kbuf(src) + rk + d;
        const typename C::KT* vp = c.vbuf(src) + rv + d;
        float x[8];
        if (fz_aligned(kp, C::KVEC)) C::ldkv8(x, kp); else for (int i = 0; i < 8; i++) x[i] = C::ldkv(kp + i);
        fz_st8_f32(sk + col * KS + d, x);
        if (fz_aligned(vp, C::KVEC)) C::ldkv8(x, vp); else for (int i = 0; i < 8; i++) x[i] = C::ldkv(vp + i);
        fz_st8_f32(sv + col * KS + d, x);
      } else {
        const float z[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
        fz_st8_f32(sk + col * KS + d, z); fz_st8_f32(sv + col * KS + d, z);
      }
    }
  } else {
    for (int e = threadIdx.x; e < C::BC * DH; e += blockDim.x) {
      const int col = e / DH, d = e % DH;
      const i64 rk = srk[col], rv = srv[col]; const int src = ssrc[col];
      sk[col * KS + d] = rk >= 0 ? C::ldkv(c.kbuf(src) + rk + d) : 0.f;
      sv[col * KS + d] = rv >= 0 ? C::ldkv(c.vbuf(src) + rv + d) : 0.f;
    }
  }
}

// fz_att_simt_rows attends query rows [0, nrows) of sequence b, of its sq
// queries, to keys [j0, j1) of its tk keys (n per source) of kv head g: row
// rr is query i of head h, at(rr, h, i). With one split (nsplit == 1) it
// stores the rows' output, otherwise split sp's partials of them to ws.
template <class C, class At>
FZ_DEV void fz_att_simt_rows(const C& c, float* ws, i64 b, i64 g, const i64 (&n)[C::NSRC], i64 tk, i64 sq, i64 j0, i64 j1, i64 nrows, int nsplit, int sp, At at) {
  constexpr int DH = C::DH, QP = C::QP, BC = C::BC, KS = DH + 4;
  // The accumulators of a thread: elements threadIdx.x + i * NT of the
  // QP x DH block of rows.
  constexpr int EPT = (QP * DH + C::NT - 1) / C::NT;
  __shared__ __align__(16) float sQ[QP * DH];
  __shared__ __align__(16) float sK[BC * KS];
  __shared__ __align__(16) float sV[BC * KS];
  __shared__ float sS[QP * BC];
  __shared__ float sM[QP], sL[QP], sA[QP];
  __shared__ i64 sRK[BC], sRV[BC];
  __shared__ int sSrc[BC];
  i64 win = 0; // the window's keys (fz_att_simt_masked)
  if constexpr (C::WINDOW) win = c.window();
  for (i64 r0 = 0; r0 < nrows; r0 += QP) {
    const int nr = (int)fz_min64(QP, nrows - r0);
    __syncthreads();
    // Queries, pre-scaled.
    for (int e = threadIdx.x; e < QP * DH; e += blockDim.x) {
      const int r = e / DH, d = e % DH;
      float x = 0.f;
      if (r < nr) {
        i64 h, i;
        at(r0 + r, h, i);
        x = C::ldq(c.q(b, h, i, d)) * C::SCALE;
      }
      sQ[e] = x;
    }
    if (threadIdx.x < QP) { sM[threadIdx.x] = -FZ_INF; sL[threadIdx.x] = 0.f; }
    float o[EPT];
#pragma unroll
    for (int i = 0; i < EPT; i++) o[i] = 0.f;
    // The keys the rows' mask leaves.
    i64 jlo = j0, jhi = j1;
    if constexpr (C::CAUSAL) {
      i64 maxpos = -1, minpos = tk;
      for (int r = 0; r < nr; r++) {
        i64 h, i;
        at(r0 + r, h, i);
        const i64 pos = tk - sq + i;
        maxpos = pos > maxpos ? pos : maxpos; minpos = pos < minpos ? pos : minpos;
      }
      jhi = fz_min64(jhi, maxpos + 1);
      if constexpr (C::WINDOW) jlo = fz_max64(jlo, minpos - win + 1);
    }
    for (i64 jt = jlo; jt < jhi; jt += BC) {
      __syncthreads();
      // The first BC threads find the tile's keys' sources and rows.
      if (threadIdx.x < BC) {
        const i64 j = jt + threadIdx.x;
        i64 rk = -1, rv = -1; int src = 0;
        if (j < jhi) src = c.krow(b, g, j, n, rk, rv);
        sRK[threadIdx.x] = rk; sRV[threadIdx.x] = rv; sSrc[threadIdx.x] = src;
      }
      __syncthreads();
      fz_att_simt_tile<C, KS>(c, sRK, sRV, sSrc, sK, sV);
      __syncthreads();
      // Scores.
      for (int e = threadIdx.x; e < QP * BC; e += blockDim.x) {
        const int r = e / BC, col = e % BC;
        const i64 j = jt + col;
        float s = -FZ_INF;
        if (r < nr && j < jhi) {
          float acc = 0.f;
          if constexpr (DH % 4 == 0) {
#pragma unroll 8
            for (int d = 0; d < DH; d += 4) {
              const float4 a = *(const float4*)(sQ + r * DH + d), kk = *(const float4*)(sK + col * KS + d);
              acc = fmaf(a.x, kk.x, acc); acc = fmaf(a.y, kk.y, acc); acc = fmaf(a.z, kk.z, acc); acc = fmaf(a.w, kk.w, acc);
            }
          } else {
            for (int d = 0; d < DH; d++) acc = fmaf(sQ[r * DH + d], sK[col * KS + d], acc);
          }
          s = acc;
          if constexpr (C::BIAS) {
            i64 h, i;
            at(r0 + r, h, i);
            if (!fz_att_simt_masked<C>(tk, sq, win, i, j)) s += C::BSCALE * C::ldb(c.bias(b, h, i, j));
          }
          if constexpr (C::CAP != 0.f) s = fz_softcap(s, C::CAP);
          if constexpr (C::CAUSAL) {
            i64 h, i;
            at(r0 + r, h, i);
            if (fz_att_simt_masked<C>(tk, sq, win, i, j)) s = -FZ_INF;
          }
        }
        sS[e] = s;
      }
      __syncthreads();
      // Online softmax: a warp per row, a lane per key.
      for (int r = threadIdx.x >> 5; r < QP; r += blockDim.x >> 5) {
        const int lane = threadIdx.x & 31;
        const float s = sS[r * BC + lane];
        const float mold = sM[r];
        const float mnew = fmaxf(mold, fz_warp_max(s));
        const float p = s == -FZ_INF ? 0.f : fz_exp(s - mnew);
        const float sum = fz_warp_sum(p);
        sS[r * BC + lane] = p;
        __syncwarp(); // every lane has read sM[r] before lane 0 writes it
        if (lane == 0) {
          const float alpha = mold == -FZ_INF ? 0.f : fz_exp(mold - mnew);
          sA[r] = alpha; sL[r] = sL[r] * alpha + sum; sM[r] = mnew;
        }
      }
      __syncthreads();
      // P·V.
#pragma unroll
      for (int i = 0; i < EPT; i++) {
        const int e = threadIdx.x + i * C::NT;
        const int r = e / DH, d = e % DH;
        if (r >= QP) continue;
        float acc = o[i] * sA[r];
#pragma unroll 8
        for (int col = 0; col < BC; col++) acc = fmaf(sS[r * BC + col], sV[col * KS + d], acc);
        o[i] = acc;
      }
    }
    __syncthreads();
    // Results.
#pragma unroll
    for (int i = 0; i < EPT; i++) {
      const int e = threadIdx.x + i * C::NT;
      const int r = e / DH, d = e % DH;
      if (r >= nr) continue;
      i64 h, qi;
      at(r0 + r, h, qi);
      if (nsplit == 1) {
        C::sto(c.out(b, h, qi, d), sL[r] > 0.f ? o[i] / sL[r] : 0.f);
      } else {
        float* pp = fz_att_simt_part<DH>(ws, sp, c.nb() * C::NH * c.nsq(), (b * C::NH + h) * c.nsq() + qi);
        pp[2 + d] = o[i];
        if (d == 0) { pp[0] = sM[r]; pp[1] = sL[r]; }
      }
    }
  }
}

// fz_att_simt_decode is the split-KV decode entry: block (split, kv head g,
// sequence b), the grid's x, y and z, attends its chunk of the keys for
// every query of the group's heads, row rr query rr % S of head
// g * GRP + rr / S.
template <class C>
FZ_DEV void fz_att_simt_decode(const C& c, float* ws) {
  const int nsplit = gridDim.x, sp = blockIdx.x;
  const i64 sq = c.nsq();
  for (i64 b = blockIdx.z; b < c.nb(); b += gridDim.z) {
    for (i64 g = blockIdx.y; g < C::NG; g += gridDim.y) {
      i64 n[C::NSRC];
      c.lens(b, n);
      const i64 tk = fz_att_simt_keys(n);
      const i64 chunk = ((tk + nsplit - 1) / nsplit + C::BC - 1) / C::BC * C::BC;
      const i64 j0 = fz_min64(tk, sp * chunk), j1 = fz_min64(tk, j0 + chunk);
      fz_att_simt_rows(c, ws, b, g, n, tk, sq, j0, j1, C::GRP * sq, nsplit, sp, [&](i64 rr, i64& h, i64& i) {
        h = g * C::GRP + rr / sq;
        i = rr % sq;
      });
    }
  }
}

// fz_att_simt_merge is the decode's merge entry: with more than one split,
// block (0, kv head g, sequence b) of the decode's grid weighs the splits'
// partials of the group's rows by their log-sum-exp into the output.
template <class C>
FZ_DEV void fz_att_simt_merge(const C& c, float* ws) {
  const int nsplit = gridDim.x;
  if (nsplit <= 1 || blockIdx.x != 0) return;
  const i64 rows = c.nb() * C::NH * c.nsq();
  for (i64 b = blockIdx.z; b < c.nb(); b += gridDim.z) {
    for (i64 g = blockIdx.y; g < C::NG; g += gridDim.y) {
      const i64 nrows = C::GRP * c.nsq();
      for (i64 e = threadIdx.x; e < nrows * C::DH; e += blockDim.x) {
        const i64 rr = e / C::DH; const int d = (int)(e % C::DH);
        const i64 h = g * C::GRP + rr / c.nsq(), qi = rr % c.nsq();
        const i64 row = (b * C::NH + h) * c.nsq() + qi;
        float mx = -FZ_INF;
        for (int s = 0; s < nsplit; s++) mx = fmaxf(mx, fz_att_simt_part<C::DH>(ws, s, rows, row)[0]);
        float l = 0.f, acc = 0.f;
        if (mx != -FZ_INF) {
          for (int s = 0; s < nsplit; s++) {
            const float* pp = fz_att_simt_part<C::DH>(ws, s, rows, row);
            if (pp[0] == -FZ_INF) continue;
            const float f = fz_exp(pp[0] - mx);
            l += pp[1] * f; acc += pp[2 + d] * f;
          }
        }
        C::sto(c.out(b, h, qi, d), l > 0.f ? acc / l : 0.f);
      }
    }
  }
}

// fz_att_simt_prefill is the tiled prefill entry: block (query block of
// QB, head h, sequence b), the grid's x, y and z, attends its queries to
// every key of the sequence, skipping the tiles the mask hides.
template <class C>
FZ_DEV void fz_att_simt_prefill(const C& c) {
  const i64 nqb = (c.nsq() + C::QB - 1) / C::QB;
  for (i64 b = blockIdx.z; b < c.nb(); b += gridDim.z) {
    for (i64 h0 = blockIdx.y; h0 < C::NH; h0 += gridDim.y) {
      const i64 g = h0 / C::GRP;
      i64 n[C::NSRC];
      c.lens(b, n);
      const i64 tk = fz_att_simt_keys(n);
      for (i64 qb = blockIdx.x; qb < nqb; qb += gridDim.x) {
        const i64 q0 = qb * C::QB;
        // One split: the output, no partials.
        fz_att_simt_rows(c, (float*)0, b, g, n, tk, c.nsq(), 0, tk, fz_min64(C::QB, c.nsq() - q0), 1, 0, [&](i64 rr, i64& h, i64& i) {
          h = h0;
          i = q0 + rr;
        });
      }
    }
  }
}

// fz_att_simt_varlen is the entry of attention over packed queries (the
// context's qlen(b)): block (work item, head h), the grid's x
// and y. The work items are the query tiles of the sequences in order,
// sequence b's ceil(qlen(b) / QB) tiles of QB of its own queries (the last
// partial), so that no tile holds two sequences' queries; a block finds its
// tile's sequence by counting the tiles before it, and the blocks past the
// last tile exit. Query i of sequence b (packed token indptr[b] + i, the
// context's q and out) is at key position tk - qlen(b) + i of the sequence's tk keys.
template <class C>
FZ_DEV void fz_att_simt_varlen(const C& c) {
  for (i64 h0 = blockIdx.y; h0 < C::NH; h0 += gridDim.y) {
    const i64 g = h0 / C::GRP;
    for (i64 item = blockIdx.x;; item += gridDim.x) {
      i64 b = 0, t = item;
      for (; b < c.nb(); b++) {
        const i64 tiles = (c.qlen(b) + C::QB - 1) / C::QB;
        if (t < tiles) break;
        t -= tiles;
      }
      if (b == c.nb()) break;
      i64 n[C::NSRC];
      c.lens(b, n);
      const i64 tk = fz_att_simt_keys(n), sq = c.qlen(b), q0 = t * C::QB;
      fz_att_simt_rows(c, (float*)0, b, g, n, tk, sq, 0, tk, fz_min64(C::QB, sq - q0), 1, 0, [&](i64 rr, i64& h, i64& i) {
        h = h0;
        i = q0 + rr;
      });
    }
  }
}
