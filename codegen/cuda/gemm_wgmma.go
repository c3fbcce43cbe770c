package cuda

import (
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// The tensor-core GEMM on sm_90a (device/gemv_wgmma.cuh), which a gemm
// launch asks for (plan.Launch.WGMMA): tiles of plan.GemmWGRows rows by
// the GEMV's gemvRowTN column slots, walked by a persistent grid, K
// streamed through a ring of plan.GemmWGStages stages of plan.GemmWGK
// positions. It is the wgmma GEMV's loop at 128 rows: every thread copies
// its share of a stage by cp.async, and a stage's wgmmas run while the
// next is waited for and the one after is issued; the tile's sums go
// through shared memory to the GEMV's tile epilogue. (A producer warpgroup
// feeding two consumer warpgroups through mbarriers spilled: with 128
// sums a consumer thread, 384 threads leave too few registers.)
const (
	gemmWGThreads = plan.GemmWGThreads
	// gemmWGWeightBytes is a stage's weight tile, its rows following.
	gemmWGWeightBytes = plan.GemmWGK * gemvRowTN * 2
	// gemmWGResStride is the f32 row stride of the tile's sums in shared
	// memory: 4 floats past a row of slots, so that the eight rows a warp
	// stores at once (fz_gemv_wg_store) fall in distinct banks.
	gemmWGResStride = gemvRowTN + 4
	// gemmWGEpiBatch is the elements a thread of the tile epilogue takes
	// an unrolled step (emitTileEpilogue).
	gemmWGEpiBatch = 8
)

// gemmWGLaunch reports whether the kernel's launch is the wgmma GEMM's:
// its block and its ring in dynamic shared memory
// (plan.GemmWGSharedBytes).
func (g *gemmModel) gemmWGLaunch() bool {
	l := g.k.pk.Launch
	return l != nil && l.Variant == plan.VariantGemm && l.WGMMA && g.k.nt == gemmWGThreads
}

// gemmWGMMA reports whether the kernel takes the wgmma GEMM for more than
// plan.GemvMaxRows rows: a launch that asks for it, operands the rings
// copy (ringOperands), neither a cache view, and tiles whose every 8-slot
// group is 8 contiguous, aligned columns.
func (g *gemmModel) gemmWGMMA() bool {
	if !g.gemmWGLaunch() {
		return false
	}
	if !g.ringOperands() || g.av.cache != nil || g.bv.cache != nil {
		return false
	}
	for i := range g.epi.segs {
		if !g.epi.segs[i].vec8(gemvRowTN) {
			return false
		}
	}
	return true
}

// emitGemmWG writes the wgmma GEMM as the device function @BODY@_wg over
// the launch's work items, its ring aligned to plan.GemvWGAlign.
//
// Thread tid copies 8-slot group wc = tid % 32 of weight rows tid / 32 + 8i
// of a stage (a warp, one row's 512 bytes), and chunks xc + 4j of two rows
// of the left operand (a warp, 64 bytes of each of eight rows at a time):
// each warp writes whole shared-memory lines.
func (g *gemmModel) emitGemmWG(w *writer) error {
	k := g.k
	stages, kstep, sb := plan.GemmWGStages, plan.GemmWGK, plan.GemmWGStageBytes
	w.open("FZ_DEV void @BODY@_wg(%s, const i64 bid, const i64 nblk, unsigned char* ring, i64* scol, const u16** sArow) {", k.signature(false))
	w.line("const int tid = threadIdx.x, wg = tid >> 7, wc = tid & 31, xr = (tid >> 2) & 7, xc = tid & 3;")
	w.line("const u32 rb = fz_smem_addr(ring);")
	w.line("float* res = (float*)ring;")
	w.line("const u64 da = fz_wg_desc(rb + wg * %d, 16, 1024, 1), db = fz_wg_desc(rb + %d, 128, %d, 0);", 2*kstep*128, gemmWGWeightBytes, kstep*16)
	batch, err := g.itemLoop(w, gemvRowTN, plan.GemmWGRows, "rt", true, true)
	if err != nil {
		return err
	}
	w.open("for (int s = tid; s < %d; s += blockDim.x) {", gemvRowTN)
	w.line("const i64 c = @BODY@_col%d(seg, u, s, %s);", gemvRowTN, k.dimArgs())
	w.line("scol[s] = c < nv ? c : -1;")
	w.close()
	w.open("for (int i = tid; i < %d; i += blockDim.x) {", plan.GemmWGRows)
	ap, err := g.aRowAddr(w, "ar", ixv("i"))
	if err != nil {
		return err
	}
	w.line("sArow[i] = i < mr ? (const u16*)(%s) : 0;", ap)
	w.close()
	w.line("__syncthreads();")
	w.line("const i64 nst = (kv + %d) / %d;", kstep-1, kstep)
	if err := g.emitGemmWGIssue(w, batch); err != nil {
		return err
	}
	wgRing{stages: stages, stageBytes: sb, rows: kstep, nb: "16", count: "nst", counter: "i64", stride: gemmWGResStride, bf16: g.bv.dt == ir.BF16}.emit(w)
	w.line("__syncthreads();")
	g.emitTileEpilogue(w, false, ixc(0), gemmWGResStride, gemmWGEpiBatch)
	w.line("__syncthreads();")
	w.close()
	w.close()
	return nil
}

// emitGemmWGIssue writes issue(st, so), which copies stage st of the item
// to ring offset so: the weight rows past kv and the left operand's
// positions past kv and rows past mr are zero fills.
func (g *gemmModel) emitGemmWGIssue(w *writer, batch []ix) error {
	k := g.k
	kstep := plan.GemmWGK
	bs := shapeOf(g.b)
	kstride, simple := g.bv.simpleAxis(len(bs) - 2)
	w.line("const i64 col = scol[wc * 8], cl = col >= 0 ? col : 0;")
	w.line("const u16* xa[2] = {sArow[8 * (tid >> 5) + xr], sArow[8 * ((tid >> 5) + 8) + xr]};")
	w.line("const u16* x0 = sArow[0];")
	wa, err := k.addr(g.b, g.operandIndex(g.b, batch, [2]ix{ixv("kr"), ixv("cl")}))
	if err != nil {
		return err
	}
	if simple {
		w.line("const i64 wrs = %s;", ixp(kstride))
		w.open("const u16* wp = [&] {")
		w.line("const i64 kr = tid >> 5;")
		w.line("return (const u16*)(%s);", wa)
		w.close("}();")
	} else {
		w.open("const u16* wp = [&] {")
		w.line("const i64 kr = 0;")
		w.line("return (const u16*)(%s);", wa)
		w.close("}();")
	}
	w.open("auto issue = [&](i64 st, u32 so) {")
	w.line("const i64 kb = st * %d;", kstep)
	w.line("const bool whole = kb + %d <= kv;", kstep)
	w.line("#pragma unroll")
	w.open("for (int i = 0; i < %d; i++) {", kstep/8)
	w.line("const int r = (tid >> 5) + 8 * i;")
	w.line("const bool ok = col >= 0 && (whole || kb + r < kv);")
	if simple {
		w.line("const u16* src = ok ? wp + (kb + 8 * i) * wrs : wp;")
	} else {
		w.open("const u16* src = !ok ? wp : [&] {")
		w.line("const i64 kr = kb + r;")
		w.line("return (const u16*)(%s);", wa)
		w.close("}();")
	}
	w.line("fz_cp16s(rb + so + fz_gemv_wg_woff(r, wc, %d), src, ok ? 16 : 0);", kstep)
	w.close()
	// Copy i of a thread's 2·per is chunk xc + 4 (i % per) of row
	// 8 (tid/32 + 8 (i / per)) + xr.
	per := kstep / 32
	w.line("#pragma unroll")
	w.open("for (int i = 0; i < %d; i++) {", 2*per)
	w.line("const int n = 8 * ((tid >> 5) + 8 * (i / %d)) + xr, c = xc + 4 * (i %% %d);", per, per)
	w.line("const u16* a = xa[i / %d];", per)
	w.line("const i64 kx = kb + c * 8;")
	w.line("const int bytes = a ? (int)fz_max64(0, fz_min64(16, 2 * (kv - kx))) : 0;")
	w.line("fz_cp16s(rb + so + fz_gemv_wg_xoff(n, c, %d, %d), bytes ? a + kx : x0, bytes);", kstep, gemmWGWeightBytes)
	w.close()
	w.close("};")
	return nil
}
