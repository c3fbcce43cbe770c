package cuda

import (
	"fmt"
	"github.com/fuser-dev/fuser/ir"
	"strings"
)

// dimSig and dimArgs are the dim parameters of helper functions.
func (k *kgen) dimSig() string {
	var ps []string
	for _, d := range k.g.Dims {
		ps = append(ps, "i64 "+dimParam(d))
	}
	return strings.Join(ps, ", ")
}

func (k *kgen) dimArgs() string {
	var ps []string
	for _, d := range k.g.Dims {
		ps = append(ps, dimParam(d))
	}
	return strings.Join(ps, ", ")
}

// bodyArgs are the body-level names of the kernel parameters, to pass to
// helper functions taking the body signature.
func (k *kgen) bodyArgs() string {
	var as []string
	for i, p := range k.params {
		if p.Value == nil {
			as = append(as, dimParam(p.Dim))
		} else {
			as = append(as, fmt.Sprintf("p%d", i))
		}
	}
	return strings.Join(as, ", ")
}

// emitHelpers writes the tile enumeration of the epilogue's segments for
// GEMV (gemvTN slots) and tensor-core (mmaBN slots) tiles, and the GEMV
// tile functions.
func (g *gemmModel) emitHelpers(w *writer) error {
	k := g.k
	n := ixp(g.n)
	if g.bN && (g.bv.dt == ir.BF16 || g.bv.dt == ir.F16) {
		// Weight rows are read once: past L1, with the L2 fetching the
		// 256 bytes around each load (bench/gemv_variants streams this way).
		w.line("FZ_DEV uint4 @BODY@_ld16(const void* p) {")
		w.line("  uint4 v;")
		w.line("  asm(\"ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%%0,%%1,%%2,%%3}, [%%4];\" : \"=r\"(v.x), \"=r\"(v.y), \"=r\"(v.z), \"=r\"(v.w) : \"l\"(p));")
		w.line("  return v;")
		w.line("}")
	}
	// plan.GemvSplitRows is the Go twin.
	w.line("FZ_DEV i64 @BODY@_kper(i64 kv, i64 nsplit) { return ((kv + nsplit - 1) / nsplit + 7) / 8 * 8; }")
	if g.counters > 0 {
		w.line("// Split-K partials and tile arrival counters (zero at load, n a launch: fz_split_join).")
		w.line("static __device__ __align__(16) float @BODY@_ws[%d];", g.partials)
		w.line("static __device__ unsigned long long @BODY@_count[%d];", g.counters)
	}
	for _, tn := range []int{g.gemvTN(), mmaBN} {
		w.open("FZ_DEV i64 @BODY@_ntiles%d(%s) {", tn, k.dimSig())
		total := ixc(0)
		for i := range g.epi.segs {
			total = ixAdd(total, g.epi.segs[i].tiles(tn, n))
		}
		w.line("return %s;", total)
		w.close()
		w.open("FZ_DEV int @BODY@_tile%d(i64 t, i64* u, %s) {", tn, k.dimSig())
		for i := range g.epi.segs {
			w.line("if (t < %s) { *u = t; return %d; }", g.epi.segs[i].tiles(tn, n), i)
			w.line("t -= %s;", g.epi.segs[i].tiles(tn, n))
		}
		w.line("*u = 0;")
		w.line("return -1;")
		w.close()
		w.open("FZ_DEV i64 @BODY@_col%d(int seg, i64 u, int s, %s) {", tn, k.dimSig())
		w.open("switch (seg) {")
		for i := range g.epi.segs {
			sg := &g.epi.segs[i]
			wd := sg.width(tn)
			w.open("case %d: {", i)
			w.line("const int q = s / %d, j = s %% %d;", wd, wd)
			w.line("if (q >= %d) return -1;", len(sg.offs))
			w.line("const i64 beta = u * %d + j;", wd)
			nb := ixc(sg.bases())
			if sg.symN {
				nb = n
			}
			w.line("if (beta >= %s) return -1;", nb)
			var offs []string
			for _, o := range sg.offs {
				offs = append(offs, intLit(o))
			}
			w.line("const i64 offs[%d] = {%s};", len(offs), strings.Join(offs, ", "))
			w.line("return %s + offs[q];", sg.colOf(ixv("beta")))
			w.close()
		}
		w.close()
		w.line("return -1;")
		w.close()
	}
	if err := g.emitSegmentFuncs(w); err != nil {
		return err
	}
	if err := g.emitPrefetch(w); err != nil {
		return err
	}
	if err := g.emitGemvTile(w); err != nil {
		return err
	}
	switch {
	case g.gemvWGMMA():
		if err := g.emitGemvWGMMA(w); err != nil {
			return err
		}
	case g.gemvMMA():
		if err := g.emitGemvMMA(w); err != nil {
			return err
		}
	}
	if g.mmaAble() {
		if err := g.emitMmaTile(w); err != nil {
			return err
		}
	}
	if g.gemmWGMMA() {
		if err := g.emitGemmWG(w); err != nil {
			return err
		}
	}
	return nil
}

// emitStageA writes the staging of rows r0..r0+MR-1, positions kc..kc+kl-1
// of the left operand into As[MR][KC] as f32 (zeros past mr and kl).
func (g *gemmModel) emitStageA(w *writer) error {
	k := g.k
	w.open("for (int e = threadIdx.x; e < MR * (KC / 8); e += blockDim.x) {")
	w.line("const int m = e / (KC / 8), c8 = (e %% (KC / 8)) * 8;")
	w.line("float v[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};")
	w.open("if (m < mr && c8 < kl) {")
	coords := g.coords(w, "ar", ixv("ub"), ixAdd(ixv("r0"), ixv("m")))
	batch := coords[:len(coords)-1]
	idx := g.operandIndex(g.a, batch, [2]ix{coords[len(coords)-1], ixv("kq0")})
	w.line("const i64 kq0 = kc + c8;")
	if g.aK {
		idx0 := g.operandIndex(g.a, batch, [2]ix{coords[len(coords)-1], ixc(0)})
		base, err := k.addr(g.a, idx0)
		if err != nil {
			return err
		}
		w.line("const %s* ap = %s;", ctype(g.av.dt), base)
		w.line("if (c8 + 8 <= kl && fz_aligned(ap + kq0, %d)) fz_ld8_%s(v, ap + kq0);", vecAlign(g.av.dt), dsuf(g.av.dt))
		w.line("else for (int i = 0; i < 8 && c8 + i < kl; i++) v[i] = fz_ld_%s(ap + kq0 + i);", dsuf(g.av.dt))
	} else {
		idx[len(idx)-1] = ixv("(kq0 + i)")
		a, err := k.addr(g.a, idx)
		if err != nil {
			return err
		}
		w.line("for (int i = 0; i < 8 && c8 + i < kl; i++) v[i] = fz_ld_%s(%s);", dsuf(g.av.dt), a)
	}
	w.close()
	w.line("float4* dst = (float4*)(As + m * KC + c8);")
	w.line("dst[0] = make_float4(v[0], v[1], v[2], v[3]); dst[1] = make_float4(v[4], v[5], v[6], v[7]);")
	w.close()
	return nil
}

// emitGemvTile writes the GEMV tile function: MR rows (a template
// parameter) of one tile of gemvTN slots (columns scol) over positions
// [k0, k1) of K, leaving the sums in res[MR][gemvTN].
func (g *gemmModel) emitGemvTile(w *writer) error {
	k := g.k
	w.line("template <int MR>")
	w.open("FZ_DEV void @BODY@_gemv(%s, const i64 ub, const i64 r0, const int mr, const i64 k0, const i64 k1, const i64* scol, const int* svec, float* As, float* red, float* res) {", k.signature(false))
	w.line("const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5, nw = blockDim.x >> 5;")
	w.line("constexpr int KC = %d / MR;", gemvStaged)
	ub := g.unitBatch(w, ixv("ub"))
	bIdx := func(kk, nn ix) []ix { return g.operandIndex(g.b, ub, [2]ix{kk, nn}) }
	bt := ctype(g.bv.dt)
	bs := dsuf(g.bv.dt)
	if g.bK {
		// Transposed right operand: a warp per slot streams its K-contiguous
		// row with 16-byte loads.
		w.line("constexpr int SPW = %d / 8;", gemvTN)
		w.line("float acc[MR][SPW];")
		w.line("#pragma unroll")
		w.line("for (int m = 0; m < MR; m++)")
		w.line("#pragma unroll")
		w.line("  for (int i = 0; i < SPW; i++) acc[m][i] = 0.f;")
		w.line("const %s* bcol[SPW];", bt)
		w.line("bool bvec[SPW];")
		w.line("#pragma unroll")
		w.open("for (int i = 0; i < SPW; i++) {")
		w.line("const i64 n = scol[wid + i * nw < %d ? wid + i * nw : 0];", gemvTN)
		base, err := k.addr(g.b, bIdx(ixc(0), ixv("fz_max64(n, 0)")))
		if err != nil {
			return err
		}
		w.line("bcol[i] = %s;", base)
		w.line("bvec[i] = n >= 0 && wid + i * nw < %d && fz_aligned(bcol[i] + k0, %d);", gemvTN, vecAlign(g.bv.dt))
		w.close()
		w.open("for (i64 kc = k0; kc < k1; kc += KC) {")
		w.line("const int kl = (int)fz_min64(KC, k1 - kc);")
		w.line("__syncthreads();")
		if err := g.emitStageA(w); err != nil {
			return err
		}
		w.line("__syncthreads();")
		w.open("for (int kk = lane * 8; kk < kl; kk += 256) {")
		w.line("float a[MR][8];")
		w.line("#pragma unroll")
		w.open("for (int m = 0; m < MR; m++) {")
		w.line("const float4 x0 = *(const float4*)(As + m * KC + kk), x1 = *(const float4*)(As + m * KC + kk + 4);")
		w.line("a[m][0] = x0.x; a[m][1] = x0.y; a[m][2] = x0.z; a[m][3] = x0.w; a[m][4] = x1.x; a[m][5] = x1.y; a[m][6] = x1.z; a[m][7] = x1.w;")
		w.close()
		w.line("#pragma unroll")
		w.open("for (int i = 0; i < SPW; i++) {")
		w.line("if (wid + i * nw >= %d || scol[wid + i * nw] < 0) continue;", gemvTN)
		w.line("float b[8];")
		w.line("if (bvec[i] && kk + 8 <= kl) fz_ld8_%s(b, bcol[i] + kc + kk);", bs)
		w.line("else for (int j = 0; j < 8; j++) b[j] = kk + j < kl ? fz_ld_%s(bcol[i] + kc + kk + j) : 0.f;", bs)
		w.line("#pragma unroll")
		w.line("for (int m = 0; m < MR; m++)")
		w.line("#pragma unroll")
		w.line("  for (int j = 0; j < 8; j++) acc[m][i] = fmaf(a[m][j], b[j], acc[m][i]);")
		w.close()
		w.close()
		w.close()
		w.line("#pragma unroll")
		w.open("for (int i = 0; i < SPW; i++) {")
		w.line("#pragma unroll")
		w.open("for (int m = 0; m < MR; m++) {")
		w.line("const float v = fz_warp_sum(acc[m][i]);")
		w.line("if (lane == 0 && wid + i * nw < %d) res[m * %d + wid + i * nw] = v;", gemvTN, gemvTN)
		w.close()
		w.close()
		w.line("__syncthreads();")
		w.close()
		return nil
	}
	// Row-major right operand: lane l owns slots 8l .. 8l+7 of the tile and
	// warp w streams rows w*U .. w*U+U-1 of every nw*U, its U loads issued
	// before their FMAs so that each thread keeps U loads in flight. Rows
	// past the chunk load its last row again and are skipped by the FMAs,
	// so that no load waits on a branch. A tile whose lane groups are 8
	// contiguous, aligned columns in every row takes 16-byte loads, kept
	// raw (4 registers a row) for 16-bit weights until their FMAs.
	w.line("float acc[MR][8];")
	w.line("#pragma unroll")
	w.line("for (int m = 0; m < MR; m++)")
	w.line("#pragma unroll")
	w.line("  for (int c = 0; c < 8; c++) acc[m][c] = 0.f;")
	w.line("i64 col[8];")
	w.line("#pragma unroll")
	w.line("for (int c = 0; c < 8; c++) col[c] = scol[lane * 8 + c];")
	w.open("for (i64 kc = k0; kc < k1; kc += KC) {")
	w.line("const int kl = (int)fz_min64(KC, k1 - kc);")
	w.line("__syncthreads();")
	if err := g.emitStageA(w); err != nil {
		return err
	}
	w.line("__syncthreads();")
	scalar, err := k.addr(g.b, bIdx(ixv("kr"), ixv("col[c]")))
	if err != nil {
		return err
	}
	floats := rowStream{
		rows: g.rowsInFlight(false),
		decl: "float b[U][8];",
		load: fmt.Sprintf("for (int c = 0; c < 8; c++) b[i][c] = col[c] >= 0 ? fz_ld_%s(%s) : 0.f;", bs, scalar),
		use:  "const float* bi = b[i];",
	}
	if !g.bN {
		g.emitRowStream(w, floats)
		w.close()
		return g.emitRowReduce(w)
	}
	r0, err := k.addr(g.b, bIdx(ixc(0), ixc(0)))
	if err != nil {
		return err
	}
	r1, err := k.addr(g.b, bIdx(ixc(1), ixc(0)))
	if err != nil {
		return err
	}
	vec, err := k.addr(g.b, bIdx(ixv("kr"), ixv("col[0]")))
	if err != nil {
		return err
	}
	vector := rowStream{rows: g.rowsInFlight(false), decl: "float b[U][8];", load: fmt.Sprintf("fz_ld8_%s(b[i], %s);", bs, vec), use: "const float* bi = b[i];"}
	if g.bv.dt == ir.BF16 || g.bv.dt == ir.F16 {
		vector = rowStream{rows: g.rowsInFlight(true), decl: "uint4 braw[U];", load: fmt.Sprintf("braw[i] = @BODY@_ld16(%s);", vec), use: fmt.Sprintf("float bi[8]; fz_unpack_%s(bi, braw[i]);", bs)}
	}
	w.open("if (svec[lane] != 0 && fz_aligned(%s + col[0], %d) && fz_aligned(%s + col[0], %d)) {", r0, vecAlign(g.bv.dt), r1, vecAlign(g.bv.dt))
	g.emitRowStream(w, vector)
	w.close()
	w.open("else {")
	g.emitRowStream(w, floats)
	w.close()
	w.close()
	return g.emitRowReduce(w)
}

// emitRowReduce sums the warps' partial sums of the row-major GEMV into
// res, one row at a time, in warp order.
func (g *gemmModel) emitRowReduce(w *writer) error {
	w.line("#pragma unroll")
	w.open("for (int m = 0; m < MR; m++) {")
	w.line("__syncthreads();")
	w.line("#pragma unroll")
	w.line("for (int c = 0; c < 8; c++) red[wid * %d + lane * 8 + c] = acc[m][c];", gemvRowTN)
	w.line("__syncthreads();")
	w.open("for (int s = tid; s < %d; s += blockDim.x) {", gemvRowTN)
	w.line("float sum = 0.f;")
	w.line("for (int q = 0; q < nw; q++) sum += red[q * %d + s];", gemvRowTN)
	w.line("res[m * %d + s] = sum;", gemvRowTN)
	w.close()
	w.close()
	w.line("__syncthreads();")
	w.close()
	return nil
}

// rowStream is how the row-major GEMV holds a warp's rows in flight: U
// (the C expression rows) rows of b declared by decl, row i (position kr) loaded by load, and bi,
// its 8 values as floats, set by use before its FMAs.
type rowStream struct {
	rows, decl, load, use string
}

// rowsInFlight is the rows a warp loads before their FMAs: raw 16-byte rows
// take 4 registers each, converted ones 8; eight rows of sums (MR) or
// blocks of more than 256 threads leave half as many registers for them.
func (g *gemmModel) rowsInFlight(raw bool) string {
	u := gemvRowsInFlight
	if raw {
		u *= 2
	}
	if g.k.nt > 256 {
		u /= 2
	}
	return fmt.Sprintf("(MR > 4 ? %d : %d)", u/2, u)
}

// emitRowStream writes the row-major GEMV's loop over a chunk's rows: the
// block reads nw * U rows a pass, warp wid the rows wid, wid + nw, ... (the
// U rows a warp has in flight lie nw rows apart), then their FMAs with the
// staged left operand. A whole pass runs its FMAs without a bounds test: a
// test per row lets ptxas sink each load to just before its row's FMAs.
func (g *gemmModel) emitRowStream(w *writer, rs rowStream) {
	w.open("{")
	w.line("constexpr int U = %s;", rs.rows)
	w.open("for (int kp = 0; kp < kl; kp += nw * U) {")
	w.line("%s", rs.decl)
	w.line("#pragma unroll")
	w.open("for (int i = 0; i < U; i++) {")
	w.line("const int kb = kp + i * nw + wid;")
	w.line("const i64 kr = kc + (kb < kl ? kb : kl - 1);")
	w.line("%s", rs.load)
	w.close()
	w.open("if (kp + nw * U <= kl) {")
	w.line("#pragma unroll")
	w.open("for (int i = 0; i < U; i++) {")
	w.line("const int kb = kp + i * nw + wid;")
	g.emitRowFMAs(w, rs)
	w.close()
	w.close()
	w.open("else {")
	w.open("for (int i = 0; i < U; i++) {")
	w.line("const int kb = kp + i * nw + wid;")
	w.line("if (kb >= kl) break;")
	g.emitRowFMAs(w, rs)
	w.close()
	w.close()
	w.close()
	w.close()
}

// emitRowFMAs writes row i's FMAs into every row of sums.
func (g *gemmModel) emitRowFMAs(w *writer, rs rowStream) {
	w.line("%s", rs.use)
	w.line("#pragma unroll")
	w.open("for (int m = 0; m < MR; m++) {")
	w.line("const float a = As[m * KC + kb];")
	w.line("#pragma unroll")
	w.line("for (int c = 0; c < 8; c++) acc[m][c] = fmaf(a, bi[c], acc[m][c]);")
	w.close()
}

// emitPrefetch writes the prefetch of positions [k0, k1) of a tile's
// columns scol of the right operand into L2: one line of 64 bytes for every
// 32 columns of a row-major operand (a lane group's 8 columns are
// contiguous where it streams fast), every 64 positions of a K-contiguous
// one. It touches no memory: the prefetched lines are read after the wait.
func (g *gemmModel) emitPrefetch(w *writer) error {
	k := g.k
	w.open("FZ_DEV void @BODY@_prefetch(%s, const i64 ub, const i64 k0, const i64 k1, const i64* scol) {", k.signature(false))
	ub := g.unitBatch(w, ixv("ub"))
	a, err := k.addr(g.b, g.operandIndex(g.b, ub, [2]ix{ixv("kr"), ixv("c")}))
	if err != nil {
		return err
	}
	if g.bK {
		w.open("for (i64 e = threadIdx.x; e < fz_cdiv64(k1 - k0, 64) * %d; e += blockDim.x) {", gemvTN)
		w.line("const i64 c = scol[e %% %d], kr = k0 + e / %d * 64;", gemvTN, gemvTN)
	} else {
		per := gemvRowTN / 32
		w.open("for (i64 e = threadIdx.x; e < (k1 - k0) * %d; e += blockDim.x) {", per)
		w.line("const i64 c = scol[e %% %d * 32], kr = k0 + e / %d;", per, per)
	}
	w.line("if (c >= 0) fz_prefetch_l2(%s);", a)
	w.close()
	w.close()
	return nil
}
