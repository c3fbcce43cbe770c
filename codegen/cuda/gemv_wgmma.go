package cuda

import (
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// The tensor-core GEMV on sm_90a (device/gemv_wgmma.cuh), which the launch
// asks for (plan.Launch.WGMMA): the mma.sync GEMV's tile, zero fills and
// cp.async ring, with GemvWGStages stages in wgmma's canonical layouts, and
// each of the block's two warpgroups taking half the tile's columns over
// every position of a stage, so that the sums need no reduction between
// warps. A stage's wgmmas run while the next stage is waited for and its
// copies issued: a stage is refilled two steps after it was read
// (GemvWGStages - 2 stages in flight), once the wgmma wait of the step
// between has retired it.
const gemvWGWeightBytes = plan.GemvRingRows * gemvRowTN * 2

// gemvWGMMA reports whether the kernel's tensor-core GEMV issues wgmma.
func (g *gemmModel) gemvWGMMA() bool {
	l := g.k.pk.Launch
	return g.gemvMMA() && l != nil && l.WGMMA
}

// emitGemvWGMMA writes the wgmma GEMV tile function for NB n8 tiles of
// rows, with emitGemvMMA's signature and contract; ring is aligned to
// plan.GemvWGAlign.
//
// A stage's copies and wgmmas are the loop's whole work, so their
// addressing is fixed before it: a thread's four weight chunks of a stage
// lie 1024 bytes apart in shared memory (rows r and r+8 share r's swizzle),
// its global addresses advance by a stage's rows times the weight's row
// stride, and the wgmma descriptors of a stage are those of the first
// stage plus the stage's offset. A stage with every position inside
// [k0, k1) copies without bounds checks; the last, partial one takes the
// checked copies. A weight whose K axis is not one stride (a view that
// reshapes it) takes the checked copies throughout.
func (g *gemmModel) emitGemvWGMMA(w *writer) error {
	stages, rows := plan.GemvWGStages, plan.GemvRingRows
	wa, err := g.gemvTCOpen(w, "wg = tid >> 7")
	if err != nil {
		return err
	}
	bs := shapeOf(g.b)
	kstride, simple := g.bv.simpleAxis(len(bs) - 2)
	w.line("const int ns = (int)nst, nfull = (int)((k1 - k0) / %d);", rows)
	w.line("const u32 rb = fz_smem_addr(ring);")
	w.line("const u32 wsa = rb + fz_gemv_wg_woff(tid >> 5, wc, %d), xsa = rb + fz_gemv_wg_xoff(xm, xc >> 3, %d, %d);", rows, rows, gemvWGWeightBytes)
	w.line("const int wbytes = col >= 0 ? 16 : 0, xbytes = xm < mr ? 16 : 0;")
	if simple {
		w.line("const i64 wrs = %s;", ixp(kstride))
		w.open("const u16* wp = [&] {")
		w.line("const i64 kr = k0 + (tid >> 5);")
		w.line("return (const u16*)(%s);", wa)
		w.close("}();")
	}
	w.open("auto issue = [&](int st, u32 so) {")
	if simple {
		w.open("if (st < nfull) {")
		w.line("const u16* p = wp + (i64)st * %d * wrs;", rows)
		w.line("#pragma unroll")
		w.line("for (int i = 0; i < %d; i++) fz_cp16s(wsa + so + i * 1024, p + i * 8 * wrs, wbytes);", rows/8)
		w.line("if (xm < NB * 8) fz_cp16s(xsa + so, ap + k0 + st * %d + xc, xbytes);", rows)
		w.line("return;")
		w.close()
	}
	w.line("const i64 kb = k0 + (i64)st * %d;", rows)
	w.line("#pragma unroll")
	w.open("for (int i = 0; i < %d; i++) {", rows/8)
	w.line("const int row = (tid >> 5) + 8 * i;")
	w.line("const bool ok = col >= 0 && kb + row < k1;")
	w.line("const i64 kr = ok ? kb + row : k0;")
	w.line("fz_cp16s(wsa + so + i * 1024, %s, ok ? 16 : 0);", wa)
	w.close()
	w.open("if (xm < NB * 8) {")
	w.line("const i64 kx = kb + xc;")
	w.line("const int bytes = xm < mr ? (int)fz_max64(0, fz_min64(16, 2 * (k1 - kx))) : 0;")
	w.line("fz_cp16s(xsa + so, ap + (bytes > 0 ? kx : k0), bytes);")
	w.close()
	w.close("};")
	w.line("const u64 da = fz_wg_desc(rb + wg * %d, 16, 1024, 1), db = fz_wg_desc(rb + %d, 128, %d, 0);", 2*rows*128, gemvWGWeightBytes, rows*16)
	wgRing{stages: stages, stageBytes: plan.GemvWGStageBytes, rows: rows, nb: "NB", count: "ns", counter: "int", stride: gemvRowTN, bf16: g.bv.dt == ir.BF16}.emit(w)
	w.line("__syncthreads();")
	w.close()
	return nil
}

// wgRing is the stage loop of the wgmma GEMV and GEMM: issue(st, offset)
// copies stage st (the caller's lambda, each thread its share by
// cp.async), and descriptors da and db address the first stage's weight
// groups of this warpgroup and its rows. In the cp.async loop stages - 2
// stages are in flight ahead of the one multiplied; a stage is refilled
// two steps after it was read, once the wgmma wait of the step between
// has retired it (emitTMALoop keeps one more in flight). The sums,
// nb n8 tiles of rows, end in res, stride floats a row.
type wgRing struct {
	stages, stageBytes, rows int
	// nb is the n8 tiles of rows (a C expression), count the variable
	// holding the stage count and counter its loop variable's type.
	nb, count, counter string
	stride             int
	bf16               bool
}

// emit writes the accumulators, the cp.async loop and the store of the
// sums.
func (r wgRing) emit(w *writer) {
	r.emitAcc(w)
	r.emitCopyLoop(w)
	r.emitStore(w)
}

// emitAcc declares the warpgroup's accumulators, zeroed.
func (r wgRing) emitAcc(w *writer) {
	w.line("float acc[2][%s * 4];", r.nb)
	w.line("#pragma unroll")
	w.line("for (int i = 0; i < %s * 8; i++) (&acc[0][0])[i] = 0.f;", r.nb)
}

// emitCopyLoop writes the loop over stages that every thread's cp.async
// copies fill (issue), through the last stage's wgmmas.
func (r wgRing) emitCopyLoop(w *writer) {
	ahead, sb := r.stages-2, r.stageBytes
	w.open("for (int s = 0; s < %d; s++) {", ahead)
	w.line("if (s < %s) issue(s, s * %d);", r.count, sb)
	w.line("fz_cp_commit();")
	w.close()
	w.line("u32 rso = 0, wso = %d;", ahead*sb)
	w.open("for (%s st = 0; st < %s; st++) {", r.counter, r.count)
	w.line("fz_cp_wait<%d>();", ahead-1)
	w.line("fz_fence_proxy_async();")
	w.line("__syncthreads();")
	w.line("if (st + %d < %s) issue(st + %d, wso);", ahead, r.count, ahead)
	w.line("fz_cp_commit();")
	w.line("fz_gemv_wg_stage<%s, %v>(acc, da + (rso >> 4), db + (rso >> 4), %d, %d);", r.nb, r.bf16, r.rows, wgCopyKStep)
	w.line("fz_wgmma_wait<1>();")
	r.advance(w)
	w.close()
	w.line("fz_wgmma_wait<0>();")
	w.line("fz_cp_wait<0>();")
}

// emitTMALoop writes the loop over stages that thread 0 fills through the
// tensor copy engine (issueT(st, offset, barrier)), each stage completing
// on its mbarrier of tbar (shared address tb, 8 bytes a stage, parities in
// ph), its rows read through descriptor dbt, through the last stage's
// wgmmas. stages - 1 stages are in flight ahead of the one multiplied: a
// step issues its stage's wgmmas, retires the previous stage's (wgmma
// wait), and only then meets the block barrier that lets thread 0 refill
// that stage, so that the tensor cores hold a stage of work while the
// warps wait there. Thread 0 fences the proxies before the first copies,
// since the ring last held the previous tile's sums.
func (r wgRing) emitTMALoop(w *writer) {
	ahead, sb := r.stages-1, r.stageBytes
	w.open("if (tid == 0) {")
	w.line("fz_fence_proxy_async();")
	w.line("for (int s = 0; s < %d; s++) if (s < %s) issueT(s, s * %d, tb + 8 * s);", ahead, r.count, sb)
	w.close()
	w.line("u32 rso = 0, wso = %d, rsl = 0, wsl = %d;", ahead*sb, ahead)
	w.open("for (%s st = 0; st < %s; st++) {", r.counter, r.count)
	w.line("fz_mbar_wait(tb + 8 * rsl, (ph >> rsl) & 1u);")
	w.line("ph ^= 1u << rsl;")
	w.line("fz_gemv_wg_stage<%s, %v>(acc, da + (rso >> 4), dbt + (rso >> 4), %d, %d);", r.nb, r.bf16, r.rows, gemmTMAKStep)
	w.line("fz_wgmma_wait<1>();")
	w.line("__syncthreads();")
	w.line("if (tid == 0 && st + %d < %s) issueT(st + %d, wso, tb + 8 * wsl);", ahead, r.count, ahead)
	r.advance(w)
	w.line("rsl = rsl == %d ? 0 : rsl + 1;", r.stages-1)
	w.line("wsl = wsl == %d ? 0 : wsl + 1;", r.stages-1)
	w.close()
	w.line("fz_wgmma_wait<0>();")
}

// advance steps the read and write offsets of the ring.
func (r wgRing) advance(w *writer) {
	last, sb := (r.stages-1)*r.stageBytes, r.stageBytes
	w.line("rso = rso == %d ? 0 : rso + %d;", last, sb)
	w.line("wso = wso == %d ? 0 : wso + %d;", last, sb)
}

// emitStore writes the sums to res once every warpgroup is done with the
// ring.
func (r wgRing) emitStore(w *writer) {
	w.line("__syncthreads();")
	w.line("fz_gemv_wg_store<%s>(acc, res, %d, wg);", r.nb, r.stride)
}

// wgCopyKStep is the step of a k16 slice of the rows in the cp.async
// layout (two 128-byte chunk columns), in descriptor units of 16 bytes.
const wgCopyKStep = 2 * 128 / 16
