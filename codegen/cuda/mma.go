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
// column tile) as a device function.
func (g *gemmModel) emitMmaTile(w *writer) error {
	k := g.k
	dt := g.av.dt
	mmaFn := "fz_mma_bf16"
	if dt == ir.F16 {
		mmaFn = "fz_mma_f16"
	}
	w.open("FZ_DEV void @BODY@_mma(%s, const i64 bid, const i64 nblk, u16* smem, const u16** sArow, const u16** sBrow, i64* scol) {", k.signature(false))
	w.line("const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;")
	w.line("const int wm = (wid >> 1) & 3, wn = wid & 1;")
	batch, err := g.itemLoop(w, mmaBN, mmaBM, "rt", false, false, nil)
	if err != nil {
		return err
	}
	w.open("for (int s = tid; s < %d; s += blockDim.x) {", mmaBN)
	w.line("const i64 c = @BODY@_col%d(seg, u, s, %s);", mmaBN, k.dimArgs())
	w.line("scol[s] = c < nv ? c : -1;")
	w.close()
	// Row pointers of A (and of B^T for a K-contiguous B).
	w.open("for (int i = tid; i < %d; i += blockDim.x) {", mmaBM)
	w.line("const i64 r = r0 + i;")
	w.open("if (r < MR_) {")
	coords := g.coords(w, "ar", ixv("ub"), ixv("r"))
	aIdx := g.operandIndex(g.a, coords[:len(coords)-1], [2]ix{coords[len(coords)-1], ixc(0)})
	ap, err := k.addr(g.a, aIdx)
	if err != nil {
		return err
	}
	w.line("sArow[i] = (const u16*)(%s);", ap)
	w.close("} else sArow[i] = 0;")
	w.close()
	w.line("__syncthreads();")
	bIdx := func(kk, nn ix) []ix { return g.operandIndex(g.b, batch, [2]ix{kk, nn}) }
	if g.bK {
		w.open("for (int i = tid; i < %d; i += blockDim.x) {", mmaBN)
		w.line("const i64 n = scol[i];")
		bp, err := k.addr(g.b, bIdx(ixc(0), ixv("n")))
		if err != nil {
			return err
		}
		w.line("sBrow[i] = n >= 0 ? (const u16*)(%s) : 0;", bp)
		w.close()
		w.line("__syncthreads();")
	}
	w.line("float acc[2][4][4];")
	w.line("#pragma unroll")
	w.line("for (int a = 0; a < 2; a++)")
	w.line("#pragma unroll")
	w.line("  for (int b = 0; b < 4; b++)")
	w.line("#pragma unroll")
	w.line("    for (int c = 0; c < 4; c++) acc[a][b][c] = 0.f;")
	w.line("const i64 ktiles = (kv + %d) / %d;", mmaBK-1, mmaBK)
	// Stage loader.
	w.open("auto load = [&](i64 kt) {")
	w.line("u16* sa = smem + (kt %% %d) * %d;", mmaStages, (mmaBM*mmaBK + mmaBK*mmaBN))
	w.line("u16* sb = sa + %d;", mmaBM*mmaBK)
	w.line("const i64 kb = kt * %d;", mmaBK)
	w.open("for (int id = tid; id < %d; id += blockDim.x) {", mmaBM*mmaBK/8)
	w.line("const int row = id >> 2, ch = id & 3;")
	w.line("const i64 kk = kb + ch * 8;")
	w.line("const u16* src = sArow[row];")
	w.line("const int bytes = src && kk < kv ? (int)fz_min64(16, (kv - kk) * 2) : 0;")
	w.line("fz_cp16b(sa + row * %d + ((ch ^ ((row >> 1) & 3)) << 3), bytes ? src + kk : sArow[0] ? sArow[0] : (const u16*)0, bytes);", mmaBK)
	w.close()
	if g.bN {
		w.open("for (int id = tid; id < %d; id += blockDim.x) {", mmaBK*mmaBN/8)
		w.line("const int kr = id >> 3, ch = id & 7;")
		w.line("const i64 krow = kb + kr;")
		w.line("const i64 c = scol[ch * 8];")
		w.line("int nvalid = 0;")
		w.line("if (c >= 0 && krow < kv) { nvalid = 1; while (nvalid < 8 && scol[ch * 8 + nvalid] == c + nvalid) nvalid++; }")
		bp, err := k.addr(g.b, bIdx(ixv("krow"), ixv("c")))
		if err != nil {
			return err
		}
		w.line("const u16* src = nvalid ? (const u16*)(%s) : (const u16*)sArow[0];", bp)
		w.line("fz_cp16b(sb + kr * %d + ((ch ^ (kr & 7)) << 3), src, nvalid * 2);", mmaBN)
		w.close()
	} else {
		w.open("for (int id = tid; id < %d; id += blockDim.x) {", mmaBN*mmaBK/8)
		w.line("const int row = id >> 2, ch = id & 3;")
		w.line("const i64 kk = kb + ch * 8;")
		w.line("const u16* src = sBrow[row];")
		w.line("const int bytes = src && kk < kv ? (int)fz_min64(16, (kv - kk) * 2) : 0;")
		w.line("fz_cp16b(sb + row * %d + ((ch ^ ((row >> 1) & 3)) << 3), bytes ? src + kk : (const u16*)sArow[0], bytes);", mmaBK)
		w.close()
	}
	w.close("};")
	w.line("#pragma unroll")
	w.line("for (int s = 0; s < %d; s++) { if (s < ktiles) load(s); fz_cp_commit(); }", mmaStages-1)
	w.open("for (i64 kt = 0; kt < ktiles; kt++) {")
	w.line("fz_cp_wait<%d>();", mmaStages-2)
	w.line("__syncthreads();")
	w.line("if (kt + %d < ktiles) load(kt + %d);", mmaStages-1, mmaStages-1)
	w.line("fz_cp_commit();")
	w.open("if (wid < 8) {")
	w.line("const u16* sa = smem + (kt %% %d) * %d;", mmaStages, (mmaBM*mmaBK + mmaBK*mmaBN))
	w.line("const u16* sb = sa + %d;", mmaBM*mmaBK)
	w.line("#pragma unroll")
	w.open("for (int kk = 0; kk < 2; kk++) {")
	w.line("u32 af[2][4], bf[4][2];")
	w.line("#pragma unroll")
	w.open("for (int mt = 0; mt < 2; mt++) {")
	w.line("const int row = wm * 32 + mt * 16 + (lane & 15), ch = kk * 2 + (lane >> 4);")
	w.line("fz_ldsm4(af[mt], sa + row * %d + ((ch ^ ((row >> 1) & 3)) << 3));", mmaBK)
	w.close()
	w.line("#pragma unroll")
	w.open("for (int np = 0; np < 2; np++) {")
	w.line("const int nt = np * 2 + (lane >> 4);")
	w.line("const int nbase = @BODY@_nslot(seg, wn, nt);")
	w.line("u32 r[4];")
	if g.bN {
		w.line("const int kr = kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3), ch = nbase >> 3;")
		w.line("fz_ldsm4t(r, sb + kr * %d + ((ch ^ (kr & 7)) << 3));", mmaBN)
	} else {
		w.line("const int row = nbase + (lane & 7), ch = kk * 2 + ((lane >> 3) & 1);")
		w.line("fz_ldsm4(r, sb + row * %d + ((ch ^ ((row >> 1) & 3)) << 3));", mmaBK)
	}
	w.line("bf[np * 2][0] = r[0]; bf[np * 2][1] = r[1]; bf[np * 2 + 1][0] = r[2]; bf[np * 2 + 1][1] = r[3];")
	w.close()
	w.line("#pragma unroll")
	w.line("for (int mt = 0; mt < 2; mt++)")
	w.line("#pragma unroll")
	w.line("  for (int nt = 0; nt < 4; nt++) %s(acc[mt][nt], af[mt], bf[nt]);", mmaFn)
	w.close()
	w.close()
	w.close()
	w.line("fz_cp_wait<0>();")
	w.line("__syncthreads();")
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
	// nslot: the first slot of n8 tile nt of warp column wn in segment seg.
	var ns writer
	ns.open("FZ_DEV int @BODY@_nslot(int seg, int wn, int nt) {")
	ns.open("switch (seg) {")
	for si := range g.epi.segs {
		sg := &g.epi.segs[si]
		nq := len(sg.offs)
		per := 4 / nq
		wd := sg.width(mmaBN)
		ns.line("case %d: return (nt / %d) * %d + wn * %d + (nt %% %d) * 8;", si, per, wd, wd/2, per)
	}
	ns.close()
	ns.line("return 0;")
	ns.close()
	text := w.String()
	w.b.Reset()
	w.raw(ns.String())
	w.raw(text)
	return nil
}

// mmaCondition is the run-time check that the tensor-core path's 16-byte
// copies are aligned: A rows (and B rows) start on 16 bytes, checked at
// two consecutive rows of the first unit.
func (g *gemmModel) mmaCondition(w *writer) (string, error) {
	k := g.k
	batch := make([]ix, len(g.axes))
	for i := range batch {
		batch[i] = ixc(0)
	}
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
