package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// The tensor-core path: mmaBM × mmaBN tiles (slots mapped to columns like
// the GEMV's), K steps of mmaBK staged by a 3-stage cp.async pipeline into
// swizzled shared memory, fragments loaded with ldmatrix, and
// mma.sync.m16n8k16 with f32 accumulators. Eight warps (4 along M, 2
// along N) compute 32×32 each; extra warps of a larger block only load.
// The slots of a warp's n8 tiles are chosen so that every thread holds all
// columns of the clusters it owns, and the epilogue runs from registers.
const mmaStages = 3

// mmaSmemBytes is the pipeline's shared memory: per stage an A tile
// (mmaBM × mmaBK) and a B tile (mmaBK × mmaBN), both bf16/f16.
const mmaSmemBytes = mmaStages * (mmaBM*mmaBK + mmaBK*mmaBN) * 2

// mmaAble reports whether the kernel gets a tensor-core path: 16-bit
// operands, rows of A contiguous along K, B contiguous along N or K, and
// clusters of 1, 2 or 4 columns in runs of 8.
func (g *gemmModel) mmaAble() bool {
	dt := g.av.dt
	if dt != g.bv.dt || (dt != ir.BF16 && dt != ir.F16) || !g.aK || !(g.bN || g.bK) {
		return false
	}
	for _, v := range []*view{g.av, g.bv} {
		if v.cache != nil {
			s := shapeOf(g.b)
			if d, ok := s[len(s)-1].value(); !ok || d%8 != 0 {
				if d2, ok2 := shapeOf(g.b)[len(s)-2].value(); !ok2 || d2%8 != 0 {
					return false
				}
			}
		}
	}
	for i := range g.epi.segs {
		s := &g.epi.segs[i]
		if n := len(s.offs); n != 1 && n != 2 && n != 4 || !s.vec8(mmaBN) {
			return false
		}
	}
	return true
}

// emitMmaTile writes the tensor-core path over work items (unit, row tile,
// column tile) as a device function: the item loop, the tile's columns and
// operand rows, fz_mma_mainloop (device/gemm_mma.cuh) and the epilogue
// from the accumulators.
func (g *gemmModel) emitMmaTile(w *writer) error {
	k := g.k
	w.open("FZ_DEV void @BODY@_mma(%s, const i64 bid, const i64 nblk, u16* smem, const u16** sArow, const u16** sBrow, i64* scol) {", k.signature(false))
	w.line("%s", k.ctxInit("cx"))
	w.line("const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;")
	w.line("const int wm = (wid >> 1) & 3, wn = wid & 1;")
	if _, err := g.itemLoop(w, mmaBN, mmaBM, "rt", false, false, nil); err != nil {
		return err
	}
	w.open("for (int s = tid; s < %d; s += blockDim.x) {", mmaBN)
	w.line("const i64 c = @BODY@_col%d(seg, u, s, %s);", mmaBN, k.dimArgs())
	w.line("scol[s] = c < nv ? c : -1;")
	w.close()
	w.line("// Row pointers of A (and of B^T for a K-contiguous B).")
	w.open("for (int i = tid; i < %d; i += blockDim.x) {", mmaBM)
	w.line("const i64 r = r0 + i;")
	w.line("sArow[i] = r < MR_ ? (const u16*)cx.a(ub, r, 0) : 0;")
	w.close()
	w.line("__syncthreads();")
	if g.bK {
		w.open("for (int i = tid; i < %d; i += blockDim.x) {", mmaBN)
		w.line("const i64 n = scol[i];")
		w.line("sBrow[i] = n >= 0 ? (const u16*)cx.b(ub, 0, n) : 0;")
		w.close()
		w.line("__syncthreads();")
	}
	w.line("float acc[2][4][4];")
	w.line("fz_mma_mainloop<@BODY@_ctx, %t, %d, %d, %d, %d>(cx, ub, kv, seg, smem, sArow, sBrow, scol, acc);", g.av.dt == ir.BF16, mmaBM, mmaBN, mmaBK, mmaStages)
	// Epilogue from registers, per segment.
	w.open("if (wid < 8) {")
	w.open("switch (seg) {")
	for si := range g.epi.segs {
		sg := &g.epi.segs[si]
		nq := len(sg.offs)
		per := 4 / nq
		wd := sg.width(mmaBN)
		nb := ixc(sg.bases())
		if sg.symN {
			nb = ixp(g.n)
		}
		w.open("case %d: {", si)
		w.line("#pragma unroll")
		w.open("for (int mt = 0; mt < 2; mt++) {")
		w.line("#pragma unroll")
		w.open("for (int h = 0; h < 2; h++) {")
		w.line("const i64 r = r0 + wm * 32 + mt * 16 + h * 8 + (lane >> 2);")
		w.line("if (r >= MR_) continue;")
		w.line("#pragma unroll")
		w.open("for (int jb = 0; jb < %d; jb++) {", per)
		w.line("#pragma unroll")
		w.open("for (int c = 0; c < 2; c++) {")
		w.line("const int j = wn * %d + jb * 8 + (lane & 3) * 2 + c;", wd/2)
		w.line("const i64 beta = u * %d + j;", wd)
		w.line("if (beta >= %s) continue;", nb)
		w.line("const i64 c0 = %s;", sg.colOf(ixv("beta")))
		w.line("float ev[%d];", nq)
		for q := 0; q < nq; q++ {
			w.line("ev[%d] = acc[mt][%d + jb][h * 2 + c];", q, q*per)
		}
		w.line("@BODY@_epi%d(%s, ub, r, c0, ev, nv);", si, k.bodyArgs())
		w.close()
		w.close()
		w.close()
		w.close()
		w.line("break;")
		w.close()
	}
	w.close()
	w.close()
	w.close()
	w.close()
	return nil
}

// emitNSlot writes the context's nslot (fz_mma_mainloop reads it): the
// first slot of n8 tile nt of warp column wn in segment seg.
func (g *gemmModel) emitNSlot(w *writer) {
	w.open("FZ_DEV int nslot(int seg, int wn, int nt) {")
	w.open("switch (seg) {")
	for si := range g.epi.segs {
		sg := &g.epi.segs[si]
		per := 4 / len(sg.offs)
		wd := sg.width(mmaBN)
		w.line("case %d: return (nt / %d) * %d + wn * %d + (nt %% %d) * 8;", si, per, wd, wd/2, per)
	}
	w.close()
	w.line("return 0;")
	w.close()
}

// mmaCondition is the run-time check that the tensor-core path's 16-byte
// copies are aligned: A rows (and B rows) start on 16 bytes, checked at
// two consecutive rows of the first unit.
func (g *gemmModel) mmaCondition(w *writer) (string, error) {
	k := g.k
	batch := zeroIndex(g.unitCoords())
	var conds []string
	for _, r := range []int64{0, 1} {
		aIdx := g.operandIndex(g.a, batch, [2]ix{ixc(r), ixc(0)})
		a, err := k.addr(g.a, aIdx)
		if err != nil {
			return "", err
		}
		conds = append(conds, fmt.Sprintf("fz_aligned(%s, 16)", a))
		var bIdx []ix
		if g.bN {
			bIdx = g.operandIndex(g.b, batch, [2]ix{ixc(r), ixc(0)})
		} else {
			bIdx = g.operandIndex(g.b, batch, [2]ix{ixc(0), ixc(r)})
		}
		if g.bv.cache != nil && r > 0 {
			continue
		}
		b, err := k.addr(g.b, bIdx)
		if err != nil {
			return "", err
		}
		conds = append(conds, fmt.Sprintf("fz_aligned(%s, 16)", b))
	}
	return joinConds(conds), nil
}
