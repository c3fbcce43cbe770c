package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// The mma.sync tensor-core GEMV (device/gemv_mma.cuh, fz_gemv_mma_tile; a
// launch on sm_90a takes the wgmma one, fz_gemv_wg_tile): 2 to 64 rows of
// a unit over a row-major 16-bit weight, which is read once for all of
// them; on CUDA cores each row costs 8 FMAs a weight element, and 8 rows
// already take half the FP32 units at HBM speed. A block of 8 warps covers
// the tile's gemvRowTN columns. The ring (plan.GemvSharedBytes) is the
// launch's dynamic shared memory; the tile's sums reuse it once it drains.

// gemvMMA reports whether the kernel's GEMV takes 2 to 64 rows on tensor
// cores: ringOperands, 8 warps a block, and the tiles of gemvRowTN
// columns its rings fill (a launch of narrow tiles plans one row, which
// the CUDA cores take).
func (g *gemmModel) gemvMMA() bool {
	return g.ringOperands() && g.k.nt == 256 && g.narrow == 0
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

// emitGemvCall writes the GEMV of a row chunk (mr rows from r0) into res.
// A body with the tensor-core GEMV runs a chunk of more than
// plan.GemvCUDACoreRows rows whose tile allows it (tc, fz_gemv_tc_ok) on tensor cores, in
// n8 tiles of rows, and any other chunk in CUDA-core passes of one row (a
// tile that is not 16-byte aligned or whose columns are gathered: each row
// reads the weight again). A body without it takes CUDA-core passes of up
// to gemvMR rows. Each instantiation has one call site: the bodies are
// forced inline, and a second call site would double the kernel's code and
// its compile time.
func (g *gemmModel) emitGemvCall(w *writer) {
	pass := min(g.chunk(), gemvMR)
	if g.narrow > 0 {
		// Narrow tiles are planned for one row: a pass of one row
		// instantiates the tile once.
		pass = 1
	}
	if g.gemvMMA() {
		tile := "fz_gemv_mma_tile"
		if g.gemvWGMMA() {
			tile = "fz_gemv_wg_tile"
		}
		w.line("const bool tc = mr > %d && fz_gemv_tc_ok(cx, ub, r0, mr, scol, svec);", plan.GemvCUDACoreRows)
		w.open("if (tc) {")
		for _, nb := range []int{1, 2, 4, 8} {
			call := fmt.Sprintf("%s<@BODY@_ctx, %d>(cx, ub, r0, mr, k0, k1, scol, ring, res);", tile, nb)
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
		w.line("fz_gemv_tile<@BODY@_ctx, 1>(cx, ub, r0 + p, 1, k0, k1, scol, svec, As, red, res + p * %d);", g.gemvTN())
		w.close()
		return
	}
	w.line("const int mp = mr - p < %d ? mr - p : %d;", pass, pass)
	w.open("switch (mp <= 1 ? 1 : mp <= 2 ? 2 : mp <= 4 ? 4 : 8) {")
	for m := 1; m <= pass; m *= 2 {
		w.line("case %d: fz_gemv_tile<@BODY@_ctx, %d>(cx, ub, r0 + p, mp, k0, k1, scol, svec, As, red, res + p * %d); break;", m, m, g.gemvTN())
	}
	w.close()
	w.close()
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
