package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/plan"
)

// The static shared memory of the GEMV path: the staged A rows of a
// CUDA-core pass (f32), the per-warp partial sums of a row (up to 12 warps),
// which reuse the staged rows once a pass has read them, and the tile's
// sums up to gemvMR rows; a body with the tensor-core GEMV keeps those of
// more than plan.GemvCUDACoreRows rows in the launch's dynamic shared
// memory (plan.GemvSharedBytes).
const (
	gemvAsFloats  = max(gemvStaged, gemvRedFloats)
	gemvRedFloats = 12 * gemvRowTN
	gemvResFloats = gemvMR * gemvRowTN
)

// chunk is the rows of one GEMV item: up to plan.GemvMaxRows with the
// tensor-core GEMV, else 8 (gemvMR), or 4 for blocks of more than 256
// threads, whose register budget is smaller.
func (g *gemmModel) chunk() int {
	switch {
	case g.gemvMMA():
		return plan.GemvMaxRows
	case g.k.nt > 256:
		return 4
	}
	return gemvMR
}

// gridSetup writes the split and block numbering: a GEMV launch's z axis
// is the split-K index, otherwise every grid axis numbers blocks. The
// split count is the plan's, a constant (the launch's grid z), so that
// the epilogue's loads of the partials unroll over it.
func (g *gemmModel) gridSetup(w *writer, split bool) {
	if split {
		w.line("constexpr int nsplit = %d;", g.splits)
		w.line("const int sp = blockIdx.z;")
		w.line("const i64 nblk = (i64)gridDim.x * gridDim.y, bid = blockIdx.x + (i64)gridDim.x * blockIdx.y;")
	} else {
		w.line("const int nsplit = 1, sp = 0;")
		w.line("const i64 nblk = (i64)gridDim.x * gridDim.y * gridDim.z, bid = blockIdx.x + (i64)gridDim.x * (blockIdx.y + (i64)gridDim.y * blockIdx.z);")
	}
}

// itemLoop opens the grid-stride loop over the work items (unit ub, row
// block rb of rowsPer rows from r0, column tile t of tn columns: segment
// seg, unit u) that the GEMV and tensor-core paths share, and binds the
// unit's reduction and column lengths kv and nv; rb names the row block
// (nrb their count), and mr, when set, declares the block's rows. Items
// take a unit's column tiles in turn for each row block, or, grouped, its
// row blocks in turn within groups (fz_gemm_wg_item). open, when set,
// opens the loop instead of the grid stride over bid and nblk, binding
// item below items (a C expression, the item count). It returns the
// unit's batch coordinates.
func (g *gemmModel) itemLoop(w *writer, tn, rowsPer int, rb string, mr, grouped bool, open func(w *writer, items string)) ([]ix, error) {
	k := g.k
	w.line("const i64 UB = %s, MR_ = %s;", g.units(), g.rows())
	w.line("const i64 ntile = @BODY@_ntiles%d(%s);", tn, k.dimArgs())
	w.line("const i64 n%s = (MR_ + %d) / %d;", rb, rowsPer-1, rowsPer)
	items := fmt.Sprintf("UB * n%s * ntile", rb)
	if open != nil {
		open(w, items)
	} else {
		w.open("for (i64 item = bid; item < %s; item += nblk) {", items)
	}
	if grouped {
		w.line("const i64 ub = item / (n%s * ntile);", rb)
		w.line("i64 %s, t;", rb)
		w.line("fz_gemm_wg_item(item %% (n%s * ntile), n%s, ntile, &%s, &t);", rb, rb, rb)
	} else {
		w.line("const i64 t = item %% ntile, rest = item / ntile, %s = rest %% n%s, ub = rest / n%s;", rb, rb, rb)
	}
	w.line("const i64 r0 = %s * %d;", rb, rowsPer)
	if mr {
		w.line("const int mr = (int)fz_min64(%d, MR_ - r0);", rowsPer)
	}
	w.line("i64 u;")
	w.line("const int seg = @BODY@_tile%d(t, &u, %s);", tn, k.dimArgs())
	batch := g.unitBatch(w, ixv("ub"))
	kl, err := g.kLen(batch)
	if err != nil {
		return nil, err
	}
	nl, err := g.nLen(batch)
	if err != nil {
		return nil, err
	}
	w.line("const i64 kv = %s, nv = %s;", kl, nl)
	w.line("__syncthreads();")
	return batch, nil
}

// tileLoop opens the grid-stride loop over GEMV work items (unit, row
// chunk, tile) and computes the tile's columns into scol.
func (g *gemmModel) tileLoop(w *writer) error {
	k := g.k
	tn := g.gemvTN()
	if _, err := g.itemLoop(w, tn, g.chunk(), "rc", true, false, nil); err != nil {
		return err
	}
	w.open("for (int s = threadIdx.x; s < %d; s += blockDim.x) {", tn)
	w.line("const i64 c = @BODY@_col%d(seg, u, s, %s);", tn, k.dimArgs())
	w.line("scol[s] = c < nv ? c : -1;")
	w.close()
	w.line("__syncthreads();")
	w.open("if (threadIdx.x < %d) {", tn/8)
	w.line("bool ok = true;")
	w.line("for (int i = 0; i < 8; i++) ok = ok && scol[threadIdx.x * 8 + i] >= 0 && scol[threadIdx.x * 8 + i] == scol[threadIdx.x * 8] + i;")
	w.line("svec[threadIdx.x] = ok && (scol[threadIdx.x * 8] & 7) == 0;")
	w.close()
	w.line("__syncthreads();")
	return nil
}

// emitSplitWrite stores this split's partial sums of the tile (res) at
// its columns of the body's partials, four columns a thread, so that a
// warp's threads read 512 consecutive bytes of res and write them to
// consecutive global memory: one 16-byte store where the four columns lie
// in a group of eight contiguous, aligned ones (svec), one at a time
// elsewhere.
func (g *gemmModel) emitSplitWrite(w *writer, per ix) {
	tn := g.gemvTN()
	n, _ := g.n.value()
	w.line("const i64 wrow = (ub * MR_) + r0;")
	w.open("for (int e = threadIdx.x; e < mr * %d; e += blockDim.x) {", tn/4)
	w.line("const int m = e / %d, s = (e %% %d) * 4;", tn/4, tn/4)
	w.line("float* dst = @BODY@_ws + (i64)sp * %s + (wrow + m) * %d;", per, n)
	w.line("const float* src = res + m * %d + s;", tn)
	if n%4 == 0 {
		w.open("if (svec[s / 8]) {")
		w.line("__stcg((float4*)(dst + scol[s]), *(const float4*)src);")
		w.line("continue;")
		w.close()
	}
	w.line("#pragma unroll")
	w.line("for (int i = 0; i < 4; i++) if (scol[s + i] >= 0) __stcg(dst + scol[s + i], src[i]);")
	w.close()
}

// emitTileEpilogue runs the epilogue of a GEMV tile for rows r0 ..
// r0+mr-1. Unsplit, the tile's sums of rows m0 .. m1-1 (C expressions)
// are in res[m * stride + slot], and those rows' epilogue runs; split,
// each split takes an equal share of the tile's elements and sums their
// partials in split order (the same bits whichever split sums them).
// batch (unsplit only, a block of warps warps) adds a loop for a tile
// whose every slot has a column: a warp takes whole rows, a lane every
// 32nd slot of a row, and a thread batch elements an unrolled step
// without a bounds test between them (whole rows of them), so that their
// loads (a residual, a bias) are in flight together and the row's
// coordinates are computed once for its slots. A block of the wgmma GEMM has 8 warps an SM, and its tile
// epilogue spent most of its time waiting for one load at a time (on the
// H200 the Llama-3-8B prefill's output projection took 540 µs with its
// epilogue, 310 without, bench/results/2026-12-03-h200-gemm-wg/perf).
func (g *gemmModel) emitTileEpilogue(w *writer, split bool, per ix, stride, batch, warps int, m0, m1 string) {
	ep := g.epi
	tn := g.gemvTN()
	w.open("switch (seg) {")
	for si := range ep.segs {
		sg := &ep.segs[si]
		wd := sg.width(tn)
		w.open("case %d: {", si)
		if split {
			w.line("const int per = (mr * %d + nsplit - 1) / nsplit, lo = sp * per, hi = min(mr * %d, lo + per);", wd, wd)
			g.emitSplitEpilogue(w, si, per)
		} else {
			lo := "0"
			if m0 != "0" {
				lo = fmt.Sprintf("%s * %d", m0, wd)
			}
			w.line("const int lo = %s, hi = %s * %d;", lo, m1, wd)
			sum := func(q int, slot string) string {
				return fmt.Sprintf("res[m * %d + %s]", stride, slot)
			}
			if batch > 0 {
				w.open("if (u * %d + %d <= %s) {", wd, wd, g.segBases(sg))
				w.line("#pragma unroll %d", tileEpiRowUnroll(sg, batch, wd))
				w.open("for (int m = %s + (threadIdx.x >> 5); m < %s; m += %d) {", m0, m1, warps)
				w.line("#pragma unroll")
				w.open("for (int j = threadIdx.x & 31; j < %d; j += 32) {", wd)
				g.emitElement(w, si, sum, false, false)
				w.close()
				w.close()
				w.line("break;")
				w.close()
			}
			// Unrolled, so that the loads of an epilogue (a residual, a
			// bias) of several elements are in flight together.
			w.line("#pragma unroll 4")
			w.open("for (int e = lo + threadIdx.x; e < hi; e += blockDim.x) {")
			g.emitElement(w, si, sum, true, true)
			w.close()
		}
		w.line("break;")
		w.close()
	}
	w.close()
}

// tileEpiRowUnroll is the rows a thread of the tile epilogue's batch loop
// takes an unrolled step in segment sg (wd slots a row, whole rows of 32
// lanes unrolled within): batch elements' worth, so that their loads (a
// residual, a bias) are in flight together, unless the unrolled step's
// element code would pass tileEpiCode bytes of source (sg.codeBytes a
// function body); then as many rows as fit, one at least.
func tileEpiRowUnroll(sg *segment, batch int, wd int64) int {
	per := int((wd + 31) / 32)
	rows := max(1, batch/per)
	if code := sg.codeBytes * per; code > 0 {
		rows = min(rows, max(1, tileEpiCode/code))
	}
	return rows
}

// tileEpiCode bounds the source of a tile epilogue's unrolled step.
// Unrolled eight rows deep, the Llama-3-8B prefill's QKV epilogue (RoPE
// and the KV append, 750-860 bytes an element) ran as straight-line code
// the warps stalled fetching (ncu's no-instruction stalls, 28% of the
// kernel's samples at 512 tokens on the H200); with all three of its
// segments two rows deep it took 71 to 59 µs at 512 tokens and 352 to 338
// at 4096 on an H100. The SwiGLU of gate/up (205 bytes) lost 5% at 4096
// tokens at two rows against eight, and the residual adds (246 bytes,
// four rows) keep their batch (bench/results/2026-12-06-gemm-k64, round
// 2, where this bound was not yet the rule).
const tileEpiCode = 8192

// gemvEpiLoads bounds the partials a thread of a split GEMV's epilogue has
// in flight: up to 4 elements, their every partial read from L2 before the
// first is summed (a store may alias the partials for all the compiler
// knows, so the loads of the next element would otherwise wait for it). A
// launch of more splits takes one element at a time and its splits in
// chunks of that many loads (64 splits of Mixtral's router spilled
// registers at 4 elements).
const gemvEpiLoads = 64

// splitEpiShape is a split GEMV epilogue's batch, the elements a thread
// takes at once, and the splits whose partials it loads together (chunk),
// for no partial sums an element over ns splits.
func splitEpiShape(no, ns int64) (batch, chunk int64) {
	batch = max(1, min(4, gemvEpiLoads/(no*ns)))
	chunk = max(1, min(ns, gemvEpiLoads/(batch*no)))
	return batch, chunk
}

// emitSplitEpilogue writes a split GEMV's epilogue over its share
// [lo, hi) of segment si's elements, a batch of elements a thread at a
// time (splitEpiShape): first the partials of the batch, summed in split
// order, then their epilogues. The loads are unconditional, an element
// past hi reading e0's partials, and unrolled over the constant split
// count, so that they are in flight together: with a bound test between
// elements, and a loop over a split count the compiler did not know, each
// load waited for the sum before it (the QKV projection of the Llama-3-8B
// decode step, 5 splits, spent half its samples there at B64;
// bench/results/2026-12-06-split-epilogue).
func (g *gemmModel) emitSplitEpilogue(w *writer, si int, per ix) {
	sg := &g.epi.segs[si]
	wd := sg.width(g.gemvTN())
	// A split launch has a constant column count (gemmKernel checks it).
	n, _ := g.n.value()
	no := int64(len(sg.offs))
	batch, chunk := splitEpiShape(no, g.splits)
	w.open("for (int e0 = lo + threadIdx.x; e0 < hi; e0 += %d * blockDim.x) {", batch)
	w.line("float sum[%d][%d];", batch, no)
	w.line("#pragma unroll")
	w.line("for (int v = 0; v < %d; v++) for (int o = 0; o < %d; o++) sum[v][o] = 0.f;", batch, no)
	if chunk < g.splits {
		w.line("#pragma unroll 1")
	}
	w.open("for (int q0 = 0; q0 < nsplit; q0 += %d) {", chunk)
	w.line("float part[%d][%d][%d];", batch, no, chunk)
	w.line("#pragma unroll")
	w.open("for (int v = 0; v < %d; v++) {", batch)
	w.line("const int e = e0 + v * blockDim.x < hi ? e0 + v * blockDim.x : e0;")
	w.line("const int m = e / %d, j = e %% %d;", wd, wd)
	w.line("const float* row = @BODY@_ws + ((ub * MR_) + r0 + m) * %d;", n)
	w.line("#pragma unroll")
	w.open("for (int o = 0; o < %d; o++) {", no)
	w.line("const i64 sc = scol[o * %d + j];", wd)
	w.line("const float* src = row + (sc >= 0 ? sc : 0);")
	w.line("#pragma unroll")
	w.line("for (int q = 0; q < %d; q++) part[v][o][q] = q0 + q < nsplit ? __ldcg(src + (i64)(q0 + q) * %s) : 0.f;", chunk, per)
	w.close()
	w.close()
	w.line("#pragma unroll")
	w.line("for (int v = 0; v < %d; v++) for (int o = 0; o < %d; o++) for (int q = 0; q < %d; q++) if (q0 + q < nsplit) sum[v][o] += part[v][o][q];", batch, no, chunk)
	w.close()
	// A whole batch of a tile whose every slot has a column runs without
	// a test between its elements, so that their epilogues' loads (a
	// residual, positions) are in flight together too.
	w.line("const bool whole = e0 + %d * blockDim.x < hi && u * %d + %d <= %s;", batch-1, wd, wd, g.segBases(sg))
	body := func(checked bool) {
		w.line("#pragma unroll")
		w.open("for (int v = 0; v < %d; v++) {", batch)
		w.line("const int e = e0 + v * blockDim.x;")
		if checked {
			w.line("if (e >= hi) break;")
		}
		g.emitElement(w, si, func(q int, _ string) string { return fmt.Sprintf("sum[v][%d]", q) }, checked, true)
		w.close()
	}
	w.open("if (whole) {")
	body(false)
	w.close("} else {")
	w.indent++
	body(true)
	w.close()
	w.close()
}

// segBases is the base count of segment sg: its columns' clusters.
func (g *gemmModel) segBases(sg *segment) ix {
	if sg.symN {
		return ixp(g.n)
	}
	return ixc(sg.bases())
}

// emitElement writes the epilogue of the element at row m, slot j of
// segment si (computed from its index e when fromE), its sums read by
// sum(q, slot) for each of the segment's offsets q; checked skips a slot
// past the segment's last cluster (a tile's tail).
func (g *gemmModel) emitElement(w *writer, si int, sum func(q int, slot string) string, checked, fromE bool) {
	sg := &g.epi.segs[si]
	wd := sg.width(g.gemvTN())
	if fromE {
		w.line("const int m = e / %d, j = e %% %d;", wd, wd)
	}
	w.line("const i64 beta = u * %d + j;", wd)
	if checked {
		w.line("if (beta >= %s) continue;", g.segBases(sg))
	}
	w.line("const i64 c0 = %s;", sg.colOf(ixv("beta")))
	w.line("float ev[%d];", len(sg.offs))
	for q := range sg.offs {
		w.line("ev[%d] = %s;", q, sum(q, fmt.Sprintf("%d + j", int64(q)*wd)))
	}
	w.line("@BODY@_epi%d(%s, ub, r0 + m, c0, ev, nv);", si, g.k.bodyArgs())
}

// mainBody is the kernel's entry: the matmul and its epilogue. With
// split-K, each split writes its partial sums to the body's own partials
// (not the attention workspace, whose counters they would overwrite),
// joins the tile's other splits (fz_split_join) and runs the epilogue of
// its share of the tile, summing the partials in split order: the tile's
// reduction and epilogue run on all its splits' SMs at once.
func (g *gemmModel) mainBody(split bool) (string, error) {
	k := g.k
	tn := g.gemvTN()
	var w writer
	w.indent = 1
	// A launch with the wgmma GEMM's ring (wgl; the kernel may still not
	// take that path, wg) has the mma.sync tiles stage in the ring, so
	// that the static shared memory leaves the ring its stages.
	wgl, wg := g.gemmWGLaunch(), g.gemmWGMMA()
	static := gemvAsFloats + gemvResFloats
	if !wgl {
		static = max(static, mmaSmemBytes/4)
	}
	w.line("__shared__ __align__(128) float smem[%d];", static)
	w.line("__shared__ i64 scol[%d];", max(tn, mmaBN))
	w.line("__shared__ int svec[%d];", tn/8)
	w.line("float* As = smem; float* red = smem;")
	w.line("%s", k.ctxInit("cx"))
	if g.gemvMMA() || wgl {
		w.line("extern __shared__ __align__(128) unsigned char fz_gemv_dsm[];")
		if g.gemvWGMMA() || wgl {
			w.line("unsigned char* ring = fz_gemv_dsm + ((%du - (fz_smem_addr(fz_gemv_dsm) & %du)) & %du);", plan.GemvWGAlign, plan.GemvWGAlign-1, plan.GemvWGAlign-1)
		} else {
			w.line("unsigned char* ring = fz_gemv_dsm;")
		}
	}
	if g.gemvMMA() {
		w.line("float* res = %s > %d ? (float*)ring : smem + %d;", g.rows(), plan.GemvCUDACoreRows, gemvAsFloats)
	} else {
		w.line("float* res = smem + %d;", gemvAsFloats)
	}
	g.gridSetup(&w, split)
	if g.mmaAble() {
		cond, err := g.mmaCondition(&w)
		if err != nil {
			return "", err
		}
		mmaSmem := "(u16*)smem"
		if wgl {
			w.line("const u32 dyn = fz_dyn_smem();")
			if wg {
				w.open("if (%s > %d && %s && dyn >= %d) {", g.rows(), plan.GemvMaxRows, cond, plan.GemmWGSharedBytes())
				w.line("__shared__ const u16* wgrows[%d];", plan.GemmWGRows)
				g.warmGlobals(&w, false)
				w.line("fz_grid_sync();")
				w.line("@BODY@_wg(%s, bid, nblk, ring, scol, wgrows);", k.bodyArgs())
				w.line("return;")
				w.close()
			}
			cond += fmt.Sprintf(" && dyn >= %d", mmaSmemBytes+plan.GemvWGAlign)
			mmaSmem = "(u16*)ring"
		}
		w.open("if (%s > %d && %s) {", g.rows(), plan.GemvMaxRows, cond)
		w.line("__shared__ const u16* sArow[%d];", mmaBM)
		w.line("__shared__ const u16* sBrow[%d];", mmaBN)
		g.warmGlobals(&w, false)
		w.line("fz_grid_sync();")
		w.line("if (sp == 0) @BODY@_mma(%s, bid, nblk, %s, sArow, sBrow, scol);", k.bodyArgs(), mmaSmem)
		w.line("return;")
		w.close()
	}
	// The block's first item prefetches its first weight rows into L2,
	// then waits for the kernel before it (fz_grid_sync); a block without
	// items waits too, so that this kernel ends after that one.
	w.line("bool waited = false;")
	if err := g.tileLoop(&w); err != nil {
		return "", err
	}
	w.line("const i64 kper = fz_gemv_kper(kv, nsplit);")
	w.line("const i64 k0 = fz_min64(kv, sp * kper), k1 = fz_min64(kv, k0 + kper);")
	w.open("if (!waited) {")
	pre := gemvPrefetchRows
	if g.narrow > 0 {
		pre = gemvPrefetchRows * gemvRowTN / g.narrow
	}
	w.line("fz_gemv_prefetch(cx, ub, k0, fz_min64(k1, k0 + %d), scol);", pre)
	g.warmGlobals(&w, split)
	w.line("fz_grid_sync();")
	w.line("waited = true;")
	w.close()
	g.emitGemvCall(&w)
	per := ixp(g.workspacePerSplit())
	if split {
		// Every split of the tile writes its partials, waits for the
		// others' and sums its share of the tile.
		g.emitSplitWrite(&w, per)
		w.line("__syncthreads();")
		w.line("if (threadIdx.x == 0) fz_split_join(&@BODY@_count[item], nsplit);")
		w.line("__syncthreads();")
	}
	g.emitTileEpilogue(&w, split, per, tn, 0, 0, "0", "mr")
	w.close()
	w.line("if (!waited) fz_grid_sync();")
	return w.String(), nil
}

// warmGlobals touches the module globals the kernel reads, its epilogue's
// tables and, on the split GEMV's path, its partials and counters, before
// it waits for the kernel before it (fz_warm): their addresses'
// constant-cache misses then overlap that kernel instead of following the
// wait.
func (g *gemmModel) warmGlobals(w *writer, partials bool) {
	if partials {
		w.line("fz_warm(@BODY@_ws); fz_warm(@BODY@_count);")
	}
	for _, name := range sortedKeys(g.k.tables) {
		w.line("fz_warm(%s);", name)
	}
}
