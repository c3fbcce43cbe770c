package cuda

import (
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// The tensor-core GEMV on sm_90a (device/gemv_wgmma.cuh), which the launch
// asks for (plan.Launch.WGMMA): the same ring, tile and zero fills as the
// mma.sync GEMV, the stages in wgmma's canonical layouts, and each of the
// block's two warpgroups taking half the tile's columns over every position
// of a stage, so that the sums need no reduction between warps.
const gemvWGWeightBytes = plan.GemvRingRows * gemvRowTN * 2

// gemvWGMMA reports whether the kernel's tensor-core GEMV issues wgmma.
func (g *gemmModel) gemvWGMMA() bool {
	l := g.k.pk.Launch
	return g.gemvMMA() && l != nil && l.WGMMA
}

// emitGemvWGMMA writes the wgmma GEMV tile function for NB n8 tiles of
// rows, with emitGemvMMA's signature and contract; ring is aligned to
// plan.GemvWGAlign.
func (g *gemmModel) emitGemvWGMMA(w *writer) error {
	stages, rows := plan.GemvRingStages, plan.GemvRingRows
	wa, err := g.gemvTCOpen(w, "wg = tid >> 7")
	if err != nil {
		return err
	}
	w.open("auto issue = [&](i64 st) {")
	w.line("unsigned char* sb = ring + (st %% %d) * %d;", stages, plan.GemvWGStageBytes)
	w.line("const i64 kb = k0 + st * %d;", rows)
	w.line("#pragma unroll")
	w.open("for (int i = 0; i < %d; i++) {", rows/8)
	w.line("const int row = (tid >> 5) + 8 * i;")
	w.line("const bool ok = col >= 0 && kb + row < k1;")
	w.line("const i64 kr = ok ? kb + row : k0;")
	w.line("fz_cp16b(sb + fz_gemv_wg_woff(row, wc, %d), %s, ok ? 16 : 0);", rows, wa)
	w.close()
	w.open("if (xm < NB * 8) {")
	w.line("const i64 kx = kb + xc;")
	w.line("const int bytes = xm < mr ? (int)fz_max64(0, fz_min64(16, 2 * (k1 - kx))) : 0;")
	w.line("fz_cp16b(sb + fz_gemv_wg_xoff(xm, xc >> 3, %d, %d), ap + (bytes > 0 ? kx : k0), bytes);", rows, gemvWGWeightBytes)
	w.close()
	w.close("};")
	w.line("float acc[2][NB * 4];")
	w.line("#pragma unroll")
	w.line("for (int i = 0; i < NB * 8; i++) (&acc[0][0])[i] = 0.f;")
	w.open("for (int s = 0; s < %d; s++) {", stages-1)
	w.line("if (s < nst) issue(s);")
	w.line("fz_cp_commit();")
	w.close()
	w.open("for (i64 st = 0; st < nst; st++) {")
	w.line("fz_cp_wait<%d>();", stages-2)
	w.line("fz_fence_proxy_async();")
	w.line("__syncthreads();")
	w.line("if (st + %d < nst) issue(st + %d);", stages-1, stages-1)
	w.line("fz_cp_commit();")
	w.line("fz_gemv_wg_stage<NB, %v>(acc, fz_smem_addr(ring + (st %% %d) * %d), wg, %d, %d);", g.bv.dt == ir.BF16, stages, plan.GemvWGStageBytes, rows, gemvWGWeightBytes)
	w.close()
	w.line("fz_cp_wait<0>();")
	w.line("__syncthreads();")
	w.line("fz_gemv_wg_store<NB>(acc, res, %d, wg);", gemvRowTN)
	w.line("__syncthreads();")
	w.close()
	return nil
}
