package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/plan"
)

// The tensor-core GEMM on sm_90a (device/gemv_wgmma.cuh,
// device/gemm_wgmma.cuh), which a gemm launch asks for
// (plan.Launch.WGMMA): tiles of plan.GemmWGRows rows by the GEMV's
// gemvRowTN column slots, walked by a persistent grid, K streamed through
// a ring of plan.GemmWGStages stages of plan.GemmWGK positions. It is the
// wgmma GEMV's loop at 128 rows: thread 0 copies a stage through the
// tensor copy engine where the operands allow it (gemmWGTMA and the
// launch's checks, fz_gemm_wg_tile), every thread its share by cp.async
// elsewhere, and a stage's wgmmas run while the block meets the barrier
// that guards the refill of the stage before it (fz_wg_ring_tma); the
// tile's sums go through shared memory to the GEMV's tile epilogue. An
// unsplit launch puts the blocks in clusters of two (plan.GemmWGCluster),
// which the kernel does not read; a launch whose tiles leave SMs idle
// splits K over a cluster's blocks (plan.GemmWGSplits, emitGemmWGReduce).
// (A producer warpgroup feeding two consumer warpgroups through mbarriers
// spilled: with 128 sums a consumer thread, 384 threads leave too few
// registers. Empty mbarriers in place of the block barrier were slower on
// the H200: bench/results/2026-12-03-h200-gemm-tma.)
const (
	gemmWGThreads = plan.GemmWGThreads
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
// tensor copy engine (fz_gemm_wg_tile): the wgmma path, one unit (the
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
// the launch's work items, its ring aligned to plan.GemvWGAlign: an
// item's sums come from fz_gemm_wg_tile (device/gemm_wgmma.cuh), which
// may fill the stages through the tensor copy engine where gemmWGTMA
// allows it, and go through shared memory to the GEMV's tile epilogue.
func (g *gemmModel) emitGemmWG(w *writer) error {
	k := g.k
	tma := g.gemmWGTMA()
	splits := g.gemmWGSplits()
	w.open("FZ_DEV void @BODY@_wg(%s, const i64 block, const i64 blocks, unsigned char* ring, i64* scol, const u16** sArow) {", k.signature(false))
	w.line("%s", k.ctxInit("cx"))
	w.line("const int tid = threadIdx.x;")
	if splits == 1 {
		w.line("const i64 bid = block, nblk = blocks;")
	}
	w.line("float* res = (float*)ring;")
	if tma {
		w.line("fz_gemm_wg_tma tm = fz_gemm_wg_tma_init<%d>();", plan.GemmWGStages)
	} else {
		w.line("fz_gemm_wg_tma tm = {};")
	}
	var open func(w *writer, items string)
	if splits > 1 {
		open = g.emitGemmWGSplitLoop
	}
	if _, err := g.itemLoop(w, gemvRowTN, plan.GemmWGRows, "rt", true, true, open); err != nil {
		return err
	}
	w.open("for (int s = tid; s < %d; s += blockDim.x) {", gemvRowTN)
	w.line("const i64 c = @BODY@_col%d(seg, u, s, %s);", gemvRowTN, k.dimArgs())
	w.line("scol[s] = c < nv ? c : -1;")
	w.close()
	w.line("for (int i = tid; i < %d; i += blockDim.x) sArow[i] = i < mr ? cx.a(ub, r0 + i, 0) : 0;", plan.GemmWGRows)
	w.line("__syncthreads();")
	w.line("const i64 nst = (kv + %d) / %d;", plan.GemmWGK-1, plan.GemmWGK)
	ks0, count := "0", "nst"
	if splits > 1 {
		// Split rank takes stages ks0 .. ks0+nsl-1.
		w.line("const i64 kper = (nst + S - 1) / S, ks0 = fz_min64(nst, rank * kper), nsl = fz_min64(nst, ks0 + kper) - ks0;")
		ks0, count = "ks0", "nsl"
	}
	w.line("fz_gemm_wg_tile<@BODY@_ctx, %t>(cx, tm, ub, r0, MR_, kv, %s, %s, scol, sArow, ring, res);", tma, ks0, count)
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
