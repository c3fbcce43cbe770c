package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// The tensor-core GEMM on sm_90a (device/gemv_wgmma.cuh,
// device/gemm_wgmma.cuh), which a gemm launch asks for
// (plan.Launch.WGMMA): tiles of plan.GemmWGRows rows by the GEMV's
// gemvRowTN column slots, walked by a persistent grid, K streamed through
// a ring of plan.GemmWGStages stages of plan.GemmWGK positions. It is the
// wgmma GEMV's loop at 128 rows: thread 0 copies a stage through the
// tensor copy engine where the operands allow it (gemmWGTMA and the
// launch's checks), every thread its share by cp.async elsewhere, and a
// stage's wgmmas run while the block meets the barrier that guards the
// refill of the stage before it (wgRing.emitTMALoop); the tile's sums
// go through shared memory to the GEMV's tile epilogue. An unsplit launch
// puts the blocks in clusters of two (plan.GemmWGCluster), which the
// kernel does not read; a launch whose tiles leave SMs idle splits K over
// a cluster's blocks (plan.GemmWGSplits, emitGemmWGReduce). (A producer
// warpgroup feeding two consumer warpgroups through mbarriers spilled:
// with 128 sums a consumer thread, 384 threads leave too few registers.
// Empty mbarriers in place of the block barrier were slower on the H200:
// bench/results/2026-12-03-h200-gemm-tma.)
const (
	gemmWGThreads = plan.GemmWGThreads
	// gemmWGWeightBytes is a stage's weight tile, its rows following.
	gemmWGWeightBytes = plan.GemmWGK * gemvRowTN * 2
	// gemmWGResStride is the f32 row stride of the tile's sums in shared
	// memory: 4 floats past a row of slots, so that the eight rows a warp
	// stores at once (fz_gemv_wg_store) fall in distinct banks.
	gemmWGResStride = gemvRowTN + 4
	// gemmWGEpiBatch is the elements a thread of the tile epilogue takes
	// an unrolled step (emitTileEpilogue), whole rows of them: with 8 a
	// step, one element a row, the Llama-3-8B prefill's output projection
	// waited on its residual's loads (ncu); 32 took it from 478 to 292 µs
	// on the H200 (bench/results/2026-12-03-h200-gemm-tma).
	gemmWGEpiBatch = 32
	// gemmTMARowBytes is a row's positions of a stage as the copy engine
	// lays them: one box of GemmWGK positions by GemmWGRows rows, row n at
	// n * 128, 128-byte swizzled (16-byte chunk c at chunk c ^ (n % 8)),
	// so that every row is read from L2 as whole 32-byte sectors;
	// gemmTMAAtom is the swizzle's atom, 8 rows (the descriptor's stride),
	// and gemmTMAKStep a k16 slice's step along a row, in descriptor units
	// of 16 bytes.
	gemmTMARowBytes = plan.GemmWGK * 2
	gemmTMAAtom     = 8 * gemmTMARowBytes
	gemmTMAKStep    = 32 / 16
)

// gemmWGLaunch reports whether the kernel's launch is the wgmma GEMM's:
// its block and its ring in dynamic shared memory
// (plan.GemmWGSharedBytes).
func (g *gemmModel) gemmWGLaunch() bool {
	l := g.k.pk.Launch
	return l != nil && l.Variant == plan.VariantGemm && l.WGMMA && g.k.nt == gemmWGThreads
}

// gemmWGMMA reports whether the kernel takes the wgmma GEMM for more than
// plan.GemvMaxRows rows: a launch that asks for it, and a matmul it takes
// (wgmmaRefusal).
func (g *gemmModel) gemmWGMMA() bool {
	return g.gemmWGLaunch() && g.wgmmaRefusal() == nil
}

// wgmmaRefusal says why the wgmma GEMM cannot take the matmul, or nil:
// it takes operands the rings copy (ringOperands), neither a cache view,
// and tiles whose every 8-slot group is 8 contiguous, aligned columns.
func (g *gemmModel) wgmmaRefusal() error {
	if err := g.ringRefusal(); err != nil {
		return err
	}
	if g.av.cache != nil || g.bv.cache != nil {
		return fmt.Errorf("an operand is read from a KV cache")
	}
	for i := range g.epi.segs {
		if !g.epi.segs[i].vec8(gemvRowTN) {
			return fmt.Errorf("the result's columns of segment %d are not groups of 8 contiguous, aligned columns", i)
		}
	}
	return nil
}

// GemmWGMMA says why the wgmma GEMM cannot take gemm kernel pk of plan p
// (whose layouts are assigned), or nil when it can: the launch pass asks
// before it plans the wgmma GEMM's launch, so that a kernel it would not
// take is planned, and explained, as the mma.sync tiles.
func GemmWGMMA(p *plan.Plan, pk *plan.Kernel) error {
	k, err := newKgen(p, pk, gemmWGThreads)
	if err != nil {
		return err
	}
	g, err := k.gemmModel()
	if err != nil {
		return err
	}
	return g.wgmmaRefusal()
}

// gemmWGTMA reports whether the wgmma GEMM's stages may come through the
// tensor copy engine (emitGemmWGTMA): the wgmma path, one unit (the
// weight's address has no batch part), a weight whose K axis is one
// stride, and tiles whose every 64-slot group is 64 contiguous columns
// while they exist. Whether the left operand's rows lie one stride apart,
// and the alignments, are the launch's to check, on the device.
func (g *gemmModel) gemmWGTMA() bool {
	if !g.gemmWGMMA() {
		return false
	}
	if u := g.units(); !u.k || u.n != 1 {
		return false
	}
	bs := shapeOf(g.b)
	if _, simple := g.bv.simpleAxis(len(bs) - 2); !simple {
		return false
	}
	for i := range g.epi.segs {
		if !g.epi.segs[i].vec64(gemvRowTN) {
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
// each warp writes whole shared-memory lines. Where gemmWGTMA allows it
// and the launch's operands pass emitGemmWGTMA's checks, thread 0 fills
// the stages through the tensor copy engine instead.
func (g *gemmModel) emitGemmWG(w *writer) error {
	k := g.k
	stages, kstep, sb := plan.GemmWGStages, plan.GemmWGK, plan.GemmWGStageBytes
	tma := g.gemmWGTMA()
	splits := g.gemmWGSplits()
	w.open("FZ_DEV void @BODY@_wg(%s, const i64 block, const i64 blocks, unsigned char* ring, i64* scol, const u16** sArow) {", k.signature(false))
	w.line("const int tid = threadIdx.x, wg = tid >> 7, wc = tid & 31, xr = (tid >> 2) & 7, xc = tid & 3;")
	if splits == 1 {
		w.line("const i64 bid = block, nblk = blocks;")
	}
	w.line("const u32 rb = fz_smem_addr(ring);")
	w.line("float* res = (float*)ring;")
	w.line("const u64 da = fz_wg_desc(rb + wg * %d, 16, 1024, 1), db = fz_wg_desc(rb + %d, 128, %d, 0);", 2*kstep*128, gemmWGWeightBytes, kstep*16)
	if tma {
		g.emitGemmWGTMAState(w)
	}
	var open func(w *writer, items string)
	if splits > 1 {
		open = g.emitGemmWGSplitLoop
	}
	batch, err := g.itemLoop(w, gemvRowTN, plan.GemmWGRows, "rt", true, true, open)
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
	count := "nst"
	if splits > 1 {
		// Split rank takes stages ks0 .. ks0+nsl-1, the issues' st
		// counting from ks0.
		w.line("const i64 kper = (nst + S - 1) / S, ks0 = fz_min64(nst, rank * kper), nsl = fz_min64(nst, ks0 + kper) - ks0;")
		count = "nsl"
	}
	if err := g.emitGemmWGIssue(w, batch, splits > 1); err != nil {
		return err
	}
	ring := wgRing{stages: stages, stageBytes: sb, rows: kstep, nb: "16", count: count, counter: "i64", stride: gemmWGResStride, bf16: g.bv.dt == ir.BF16}
	ring.emitAcc(w)
	if tma {
		if err := g.emitGemmWGTMA(w, batch, splits > 1); err != nil {
			return err
		}
		w.open("if (tma) {")
		ring.emitTMALoop(w)
		w.close("} else {")
		w.indent++
		ring.emitCopyLoop(w)
		w.close()
	} else {
		ring.emitCopyLoop(w)
	}
	ring.emitStore(w)
	if splits > 1 {
		g.emitGemmWGReduce(w)
		return nil
	}
	w.line("__syncthreads();")
	g.emitTileEpilogue(w, false, ixc(0), gemmWGResStride, gemmWGEpiBatch, gemmWGThreads/32, "0", "mr")
	w.line("__syncthreads();")
	w.close()
	w.close()
	return nil
}

// emitGemmWGSplitLoop opens a split launch's loop over its items: the
// first full items unsplit, a block each, and the rest split over the
// blocks of a cluster of the launch's splits, which take an item
// together (fz_gemm_wg_full, fz_gemm_wg_work). Block x's work indices are
// x, x + blocks, ...; past full, the block is its item's split rank
// (wi - full) % S, its rank in its cluster, since full is a multiple of
// the grid's blocks, which are whole clusters.
func (g *gemmModel) emitGemmWGSplitLoop(w *writer, items string) {
	s := g.gemmWGSplits()
	w.line("const i64 nit = %s, full = fz_gemm_wg_full(nit, blocks, %d, %v);", items, s, g.k.pk.Launch.SplitTail)
	w.open("for (i64 wi = block; wi < full + %d * (nit - full); wi += blocks) {", s)
	w.line("int S;")
	w.line("const i64 item = fz_gemm_wg_work(wi, full, %d, &S);", s)
	w.line("const int rank = S > 1 ? (int)fz_cluster_rank() : 0;")
}

// gemmWGSplits is the split-K count of the kernel's wgmma GEMM launch
// (plan.GemmWGSplits), 1 without a split.
func (g *gemmModel) gemmWGSplits() int64 {
	if l := g.k.pk.Launch; g.gemmWGLaunch() && l.Splits > 1 {
		return l.Splits
	}
	return 1
}

// emitGemmWGReduce ends a split launch's item, its sums of its K share in
// res: once the cluster's sums are all stored, block rank adds rows
// rank·GemmWGRows/S onwards of every block's sums (fz_gemm_wg_reduce) and
// runs their epilogue; it arrives at the cluster barrier once its reads
// of the other blocks are done, and waits there at the item's end, so
// that no block's next stages (or its exit) overwrite sums another block
// still reads. An unsplit item (S 1: one of a split-last-round launch's
// whole rounds, or any item of a launch not in the plan's clusters) is a
// block's alone, and no block meets another.
func (g *gemmModel) emitGemmWGReduce(w *writer) {
	w.line("const int share = %d / S, m0 = min(mr, rank * share), m1 = min(mr, m0 + share);", plan.GemmWGRows)
	w.open("if (S > 1) {")
	w.line("fz_cluster_arrive();")
	w.line("fz_cluster_wait();")
	w.line("fz_gemm_wg_reduce<%d>(res, %d, S, m0, m1);", gemvRowTN, gemmWGResStride)
	w.line("fz_cluster_arrive();")
	w.close()
	w.line("__syncthreads();")
	g.emitTileEpilogue(w, false, ixc(0), gemmWGResStride, gemmWGEpiBatch, gemmWGThreads/32, "m0", "m1")
	w.line("if (S > 1) fz_cluster_wait();")
	w.line("__syncthreads();")
	w.close()
	w.close()
}

// emitGemmWGTMAState declares, before the item loop, what the copy
// engine's stages need across items: the stage mbarriers (thread 0
// initialises them; the item loop's barrier publishes them), their
// parities, the shared memory the maps are built in, whether the launch
// takes the engine (tma) and whether that was decided yet.
func (g *gemmModel) emitGemmWGTMAState(w *writer) {
	w.line("__shared__ __align__(128) u64 tms[2][16];")
	w.line("__shared__ __align__(8) u64 tbar[%d];", plan.GemmWGStages)
	w.line("const u32 tb = fz_smem_addr(tbar);")
	w.line("if (tid == 0) for (int i = 0; i < %d; i++) fz_mbar_init(tb + 8 * i, 1);", plan.GemmWGStages)
	w.line("u32 ph = 0;")
	w.line("bool tma = false, decided = false;")
	w.line("const u64 dbt = fz_wg_desc(rb + %d, 16, %d, 1);", gemmWGWeightBytes, gemmTMAAtom)
}

// emitGemmWGTMA writes, inside the item loop, the launch's decision (at its
// first item) and issueT(st, so, bar), which thread 0 calls to copy stage
// st to ring offset so through the engine, completing on the mbarrier at
// bar.
//
// The engine takes the launch when its SM has map slots, the weight's
// start and row stride and the left operand's first row and row stride
// are 16-byte multiples, the sizes fit the maps' 32-bit coordinates, and
// every row r of the left operand lies at row 0 plus r row strides (a
// view that permutes rows fails it and keeps the cp.async copies). Warp 0
// then builds the two maps: the weight's, K rows of its N columns, in
// boxes of 64 columns by GemmWGK rows landing 128-byte swizzled, as the
// copies lay them; the left operand's, its rows of kv positions, in one
// box of a stage's GemmWGK positions by GemmWGRows rows landing 128-byte
// swizzled (gemmTMARowBytes). Positions past kv, rows past the operand
// and columns past N land as zeros; a 64-slot group whose first column is
// past N (scol -1) is asked for at column N. The weight's row stride is
// the cp.async issue's wrs (emitGemmWGIssue: gemmWGTMA implies a simple K
// axis), and the maps' slots are read once an item.
func (g *gemmModel) emitGemmWGTMA(w *writer, batch []ix, split bool) error {
	k := g.k
	bs := shapeOf(g.b)
	wa, err := k.addr(g.b, g.operandIndex(g.b, batch, [2]ix{ixc(0), ixc(0)}))
	if err != nil {
		return err
	}
	w.line("const i64 nw = %s;", ixp(bs[len(bs)-1]))
	w.open("if (!decided) {")
	w.line("decided = true;")
	w.open("auto arow = [&](i64 i) {")
	ap, err := g.aRowAddr(w, "tr", ixSub(ixv("i"), ixv("r0")))
	if err != nil {
		return err
	}
	w.line("return (const u16*)(%s);", ap)
	w.close("};")
	w.line("const u16* wbase = (const u16*)(%s);", wa)
	w.line("const u16* a0 = arow(0);")
	w.line("const i64 lda = arow(1) - a0, lim = 0x7fffffff;")
	w.line("bool ok = fz_gemm_tslot(0) != 0 && fz_aligned(wbase, 16) && fz_aligned(a0, 16) && wrs > 0 && wrs %% 8 == 0 && lda > 0 && lda %% 8 == 0;")
	w.line("ok = ok && kv <= lim && nw <= lim && MR_ <= lim;")
	w.line("for (i64 i = tid; ok && i < MR_; i += blockDim.x) ok = arow(i) == a0 + i * lda;")
	w.line("tma = __syncthreads_and(ok);")
	w.open("if (tma && tid < 32) {")
	w.line("fz_tmap2d_build<3>(tms[0], fz_gemm_tslot(0), wbase, (u32)nw, (u32)kv, (u64)(wrs * 2), 64, %d);", plan.GemmWGK)
	w.line("fz_tmap2d_build<3>(tms[1], fz_gemm_tslot(1), a0, (u32)kv, (u32)MR_, (u64)(lda * 2), %d, %d);", plan.GemmWGK, plan.GemmWGRows)
	w.line("if (tid == 0) { fz_tmap_acquire(fz_gemm_tslot(0)); fz_tmap_acquire(fz_gemm_tslot(1)); }")
	w.close()
	w.close()
	groups := gemvRowTN / 64
	w.line("int gx[%d];", groups)
	w.line("for (int i = 0; i < %d; i++) gx[i] = scol[64 * i] >= 0 ? (int)scol[64 * i] : (int)nw;", groups)
	w.line("const u64* wm = fz_gemm_tslot(0);")
	w.line("const u64* am = fz_gemm_tslot(1);")
	w.open("auto issueT = [&](i64 st, u32 so, u32 bar) {")
	w.line("const int kb = (int)((%s) * %d);", stageOf(split), plan.GemmWGK)
	w.line("fz_mbar_expect(bar, %d);", plan.GemmWGStageBytes)
	w.line("for (int i = 0; i < %d; i++) fz_tma2d(rb + so + i * %d, wm, gx[i], kb, bar);", groups, plan.GemmWGK*128)
	w.line("fz_tma2d(rb + so + %d, am, kb, (int)r0, bar);", gemmWGWeightBytes)
	w.close("};")
	return nil
}

// emitGemmWGIssue writes issue(st, so), which copies stage st of the item
// to ring offset so: the weight rows past kv and the left operand's
// positions past kv and rows past mr are zero fills.
func (g *gemmModel) emitGemmWGIssue(w *writer, batch []ix, split bool) error {
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
	w.line("const i64 kb = (%s) * %d;", stageOf(split), kstep)
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

// stageOf is the stage an issue's st names: st itself, or, in a split
// launch, st stages past the split's first (ks0).
func stageOf(split bool) string {
	if split {
		return "ks0 + st"
	}
	return "st"
}
