package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// The mma.sync tensor-core GEMV (device/gemv_mma.cuh; a launch on sm_90a
// takes the wgmma one, gemv_wgmma.go): 2 to 64 rows of a unit over a
// row-major 16-bit weight, which is read once for all of them; on
// CUDA cores each row costs 8 FMAs a weight element, and 8 rows already
// take half the FP32 units at HBM speed. A block of 8 warps covers the
// tile's gemvRowTN columns, 64 a warp: warps 0-3 take the
// first 16-row step of every ring stage, warps 4-7 the second, and the two
// halves' sums are added in res. The ring (plan.GemvSharedBytes) is the
// launch's dynamic shared memory; the tile's sums reuse it once it drains.
const (
	// gemvRingWeightBytes is a ring stage's weight tile; its rows of the
	// left operand follow, gemvRingXWords 32-bit words a row.
	gemvRingWeightBytes = plan.GemvRingRows * gemvRowTN * 2
	gemvRingXWords      = plan.GemvRingXRowBytes / 4
)

// gemvMMA reports whether the kernel's GEMV takes 2 to 64 rows on tensor
// cores: ringOperands, and 8 warps a block.
func (g *gemmModel) gemvMMA() bool {
	return g.ringOperands() && g.k.nt == 256
}

// ringOperands reports whether the operands are what the tensor-core
// rings (the GEMV's and the wgmma GEMM's) copy (ringRefusal).
func (g *gemmModel) ringOperands() bool { return g.ringRefusal() == nil }

// ringRefusal says why the tensor-core rings cannot copy the operands, or
// nil: they copy a row-major bf16 or f16 weight and a K-contiguous left
// operand of the same dtype (as it is, not rounded).
func (g *gemmModel) ringRefusal() error {
	switch {
	case g.av.dt != g.bv.dt || g.bv.dt != ir.BF16 && g.bv.dt != ir.F16:
		return fmt.Errorf("operands %s and %s: the tensor-core rings take two bf16 or two f16 operands", g.av.dt, g.bv.dt)
	case !g.bN:
		return fmt.Errorf("the right operand %s is not read with its N axis contiguous (a [N, K] weight): the rings copy rows of N", plan.Root(g.b).Ref())
	case !g.aK:
		return fmt.Errorf("the left operand %s is not read with its K axis contiguous", plan.Root(g.a).Ref())
	}
	return nil
}

// emitGemvMMA writes the tensor-core GEMV tile function for NB n8 tiles of
// rows (a template parameter): rows r0..r0+mr-1 (mr ≤ 8·NB) of one tile of
// gemvRowTN slots whose every 8-slot group is 8 contiguous, aligned columns
// (or none), over positions [k0, k1), leaving the sums in res[8·NB][gemvRowTN].
// Every copy past the operands (K past k1, rows past mr, columns past the
// tile) is a zero fill, so that the MMAs run without a bounds test.
func (g *gemmModel) emitGemvMMA(w *writer) error {
	stages := plan.GemvRingStages
	wa, err := g.gemvTCOpen(w, "wid = tid >> 5, wn = wid & 3, wk = wid >> 2")
	if err != nil {
		return err
	}
	w.open("auto issue = [&](i64 st) {")
	w.line("unsigned char* sb = ring + (st %% %d) * %d;", stages, plan.GemvRingStageBytes)
	w.line("const i64 kb = k0 + st * %d;", plan.GemvRingRows)
	w.line("#pragma unroll")
	w.open("for (int i = 0; i < %d; i++) {", plan.GemvRingRows/8)
	w.line("const int row = (tid >> 5) + 8 * i;")
	w.line("const bool ok = col >= 0 && kb + row < k1;")
	w.line("const i64 kr = ok ? kb + row : k0;")
	w.line("fz_cp16b(sb + (row * %d + (wc ^ fz_gemv_swz(row)) * 8) * 2, %s, ok ? 16 : 0);", gemvRowTN, wa)
	w.close()
	w.open("if (xm < NB * 8) {")
	w.line("const i64 kx = kb + xc;")
	w.line("const int bytes = xm < mr ? (int)fz_max64(0, fz_min64(16, 2 * (k1 - kx))) : 0;")
	w.line("fz_cp16b(sb + %d + xm * %d + xc * 2, ap + (bytes > 0 ? kx : k0), bytes);", gemvRingWeightBytes, plan.GemvRingXRowBytes)
	w.close()
	w.close("};")
	w.line("float acc[NB][4][4];")
	w.line("#pragma unroll")
	w.line("for (int i = 0; i < NB * 16; i++) (&acc[0][0][0])[i] = 0.f;")
	w.open("for (int s = 0; s < %d; s++) {", stages-1)
	w.line("if (s < nst) issue(s);")
	w.line("fz_cp_commit();")
	w.close()
	w.open("for (i64 st = 0; st < nst; st++) {")
	w.line("fz_cp_wait<%d>();", stages-2)
	w.line("__syncthreads();")
	w.line("if (st + %d < nst) issue(st + %d);", stages-1, stages-1)
	w.line("fz_cp_commit();")
	w.line("const unsigned char* sb = ring + (st %% %d) * %d;", stages, plan.GemvRingStageBytes)
	w.line("fz_gemv_ring_step<NB, %v>(acc, (const u16*)sb, (const u32*)(sb + %d), %d, %d, wn, wk);", g.bv.dt == ir.BF16, gemvRingWeightBytes, gemvRowTN, gemvRingXWords)
	w.close()
	w.line("fz_cp_wait<0>();")
	w.line("__syncthreads();")
	w.line("if (wk == 1) fz_gemv_mma_store<NB>(acc, res, %d, wn * 64, false);", gemvRowTN)
	w.line("__syncthreads();")
	w.line("if (wk == 0) fz_gemv_mma_store<NB>(acc, res, %d, wn * 64, true);", gemvRowTN)
	w.line("__syncthreads();")
	w.close()
	return nil
}

// emitGemvCall writes the GEMV of a row chunk (mr rows from r0) into res.
// A body with the tensor-core GEMV runs a chunk of more than
// plan.GemvCUDACoreRows rows whose tile allows it (tc) on tensor cores, in
// n8 tiles of rows, and any other chunk in CUDA-core passes of one row (a
// tile that is not 16-byte aligned or whose columns are gathered: each row
// reads the weight again). A body without it takes CUDA-core passes of up
// to gemvMR rows. Each instantiation has one call site: the bodies are
// forced inline, and a second call site would double the kernel's code and
// its compile time.
func (g *gemmModel) emitGemvCall(w *writer) {
	args := g.k.bodyArgs()
	pass := min(g.chunk(), gemvMR)
	if g.gemvMMA() {
		w.open("if (mr > %d && tc) {", plan.GemvCUDACoreRows)
		for _, nb := range []int{1, 2, 4, 8} {
			call := fmt.Sprintf("@BODY@_gemvtc<%d>(%s, ub, r0, mr, k0, k1, scol, ring, res);", nb, args)
			switch {
			case nb == 1:
				w.line("if (mr <= %d) %s", nb*8, call)
			case nb*8 == plan.GemvMaxRows:
				w.line("else %s", call)
			default:
				w.line("else if (mr <= %d) %s", nb*8, call)
			}
		}
		w.close()
		w.line("else")
		pass = plan.GemvCUDACoreRows
	}
	w.open("for (int p = 0; p < mr; p += %d) {", pass)
	if pass == 1 {
		w.line("fz_gemv_tile<@BODY@_ctx, 1>(cx, ub, r0 + p, 1, k0, k1, scol, svec, As, red, res + p * %d);", gemvRowTN)
		w.close()
		return
	}
	w.line("const int mp = mr - p < %d ? mr - p : %d;", pass, pass)
	w.open("switch (mp <= 1 ? 1 : mp <= 2 ? 2 : mp <= 4 ? 4 : 8) {")
	for m := 1; m <= pass; m *= 2 {
		w.line("case %d: fz_gemv_tile<@BODY@_ctx, %d>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * %d); break;", m, m, gemvRowTN)
	}
	w.close()
	w.close()
}

// emitTCFlag sets tc, whether a chunk of more than plan.GemvCUDACoreRows
// rows (mr is the same in every thread of the block) may take the
// tensor-core GEMV: every 8-slot group is 8 contiguous, aligned columns or
// none, and the weight's rows and the chunk's rows of the left operand are
// 16-byte aligned (the ring copies 16 bytes at a time).
func (g *gemmModel) emitTCFlag(w *writer) error {
	k := g.k
	w.line("bool tc = false;")
	w.open("if (mr > %d) {", plan.GemvCUDACoreRows)
	ub := g.unitBatch(w, ixv("ub"))
	r0, err := k.addr(g.b, g.operandIndex(g.b, ub, [2]ix{ixc(0), ixc(0)}))
	if err != nil {
		return err
	}
	r1, err := k.addr(g.b, g.operandIndex(g.b, ub, [2]ix{ixc(1), ixc(0)}))
	if err != nil {
		return err
	}
	w.line("bool tcok = fz_aligned(%s, 16) && fz_aligned(%s, 16);", r0, r1)
	w.open("if (threadIdx.x < %d && svec[threadIdx.x] == 0) {", gemvRowTN/8)
	w.line("for (int i = 0; i < 8; i++) tcok = tcok && scol[threadIdx.x * 8 + i] < 0;")
	w.close()
	w.open("if (threadIdx.x < mr) {")
	ap, err := g.aRowAddr(w, "tr", ixv("threadIdx.x"))
	if err != nil {
		return err
	}
	w.line("tcok = tcok && fz_aligned(%s, 16);", ap)
	w.close()
	w.line("tc = __syncthreads_and(tcok);")
	w.close()
	return nil
}

// gemvTCOpen opens a tensor-core GEMV tile function (emitGemvMMA,
// emitGemvWGMMA) through its stage count nst, declaring tid and the
// path's warp numbering ids, and returns the address of weight row kr at
// this thread's column: it copies column group wc of weight rows
// (tid >> 5) + 8i, and positions xc .. xc+7 of left-operand row xm (at
// ap), of every stage.
func (g *gemmModel) gemvTCOpen(w *writer, ids string) (string, error) {
	k := g.k
	w.line("template <int NB>")
	w.open("FZ_DEV void @BODY@_gemvtc(%s, const i64 ub, const i64 r0, const int mr, const i64 k0, const i64 k1, const i64* scol, unsigned char* ring, float* res) {", k.signature(false))
	w.line("const int tid = threadIdx.x, %s;", ids)
	ub := g.unitBatch(w, ixv("ub"))
	w.line("// This thread copies column group wc of weight rows (tid >> 5) + 8i, and")
	w.line("// positions xc .. xc+7 of left-operand row xm, of every stage.")
	w.line("const int wc = tid & 31, xm = tid >> 2, xc = (tid & 3) * 8;")
	w.line("const i64 col = scol[wc * 8], cl = col >= 0 ? col : 0;")
	ap, err := g.aRowAddr(w, "xr", ixv("(xm < mr ? xm : mr - 1)"))
	if err != nil {
		return "", err
	}
	w.line("const u16* ap = %s;", ap)
	wa, err := k.addr(g.b, g.operandIndex(g.b, ub, [2]ix{ixv("kr"), ixv("cl")}))
	if err != nil {
		return "", err
	}
	w.line("const i64 nst = (k1 - k0 + %d) / %d;", plan.GemvRingRows-1, plan.GemvRingRows)
	return wa, nil
}

// aRowAddr declares (with prefix pre) the coordinates of the chunk's row m
// (r0 + m) of the left operand and returns the address of its first
// position.
func (g *gemmModel) aRowAddr(w *writer, pre string, m ix) (string, error) {
	coords := g.coords(w, pre, ixv("ub"), ixAdd(ixv("r0"), m))
	return g.k.addr(g.a, g.operandIndex(g.a, coords[:len(coords)-1], [2]ix{coords[len(coords)-1], ixc(0)}))
}

// libs are the device libraries the GEMM kernel's helpers use.
func (g *gemmModel) libs() []string {
	libs := []string{libGemv}
	if g.mmaAble() {
		libs = append(libs, libGemmMMA)
	}
	switch {
	case g.gemmWGLaunch():
		libs = append(libs, libTMA, libGemvWGMMA, libGemmWGMMA)
	case g.gemvWGMMA():
		libs = append(libs, libGemvWGMMA)
	case g.gemvMMA():
		libs = append(libs, libGemvMMA)
	}
	return libs
}
