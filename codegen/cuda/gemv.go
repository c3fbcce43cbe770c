package cuda

import (
	"fmt"
	"strings"
)

// dimSig and dimArgs are the dim parameters of helper functions.
func (k *kgen) dimSig() string {
	var ps []string
	for _, d := range k.g.Dims {
		ps = append(ps, "i64 "+dimParam(d))
	}
	return strings.Join(ps, ", ")
}

func (k *kgen) dimArgs() string {
	var ps []string
	for _, d := range k.g.Dims {
		ps = append(ps, dimParam(d))
	}
	return strings.Join(ps, ", ")
}

// bodyArgs are the body-level names of the kernel parameters, to pass to
// helper functions taking the body signature.
func (k *kgen) bodyArgs() string {
	var as []string
	for i, p := range k.params {
		if p.Dim != "" {
			as = append(as, dimParam(p.Dim))
		} else {
			as = append(as, fmt.Sprintf("p%d", i))
		}
	}
	return strings.Join(as, ", ")
}

// emitHelpers writes the tile enumeration of the epilogue's segments for
// GEMV (gemvTN slots) and tensor-core (mmaBN slots) tiles, the kernel's
// context (the device templates of the GEMV and GEMM tiles read it) and
// the mma.sync and wgmma GEMM bodies.
func (g *gemmModel) emitHelpers(w *writer) error {
	k := g.k
	n := ixp(g.n)
	if g.counters > 0 {
		w.line("// Split-K partials and tile arrival counters (zero at load, n a launch: fz_split_join).")
		w.line("static __device__ __align__(16) float @BODY@_ws[%d];", g.partials)
		w.line("static __device__ unsigned long long @BODY@_count[%d];", g.counters)
	}
	tns := []int{g.gemvTN()}
	if mmaBN != tns[0] {
		tns = append(tns, mmaBN)
	}
	for _, tn := range tns {
		w.open("FZ_DEV i64 @BODY@_ntiles%d(%s) {", tn, k.dimSig())
		total := ixc(0)
		for i := range g.epi.segs {
			total = ixAdd(total, g.epi.segs[i].tiles(tn, n))
		}
		w.line("return %s;", total)
		w.close()
		w.open("FZ_DEV int @BODY@_tile%d(i64 t, i64* u, %s) {", tn, k.dimSig())
		for i := range g.epi.segs {
			w.line("if (t < %s) { *u = t; return %d; }", g.epi.segs[i].tiles(tn, n), i)
			w.line("t -= %s;", g.epi.segs[i].tiles(tn, n))
		}
		w.line("*u = 0;")
		w.line("return -1;")
		w.close()
		w.open("FZ_DEV i64 @BODY@_col%d(int seg, i64 u, int s, %s) {", tn, k.dimSig())
		w.open("switch (seg) {")
		for i := range g.epi.segs {
			sg := &g.epi.segs[i]
			wd := sg.width(tn)
			w.open("case %d: {", i)
			w.line("const int q = s / %d, j = s %% %d;", wd, wd)
			w.line("if (q >= %d) return -1;", len(sg.offs))
			w.line("const i64 beta = u * %d + j;", wd)
			nb := ixc(sg.bases())
			if sg.symN {
				nb = n
			}
			w.line("if (beta >= %s) return -1;", nb)
			var offs []string
			for _, o := range sg.offs {
				offs = append(offs, intLit(o))
			}
			w.line("const i64 offs[%d] = {%s};", len(offs), strings.Join(offs, ", "))
			w.line("return %s + offs[q];", sg.colOf(ixv("beta")))
			w.close()
		}
		w.close()
		w.line("return -1;")
		w.close()
	}
	if err := g.emitSegmentFuncs(w); err != nil {
		return err
	}
	if err := g.emitContext(w); err != nil {
		return err
	}
	if g.mmaAble() {
		if err := g.emitMmaTile(w); err != nil {
			return err
		}
	}
	if g.gemmWGMMA() {
		if err := g.emitGemmWG(w); err != nil {
			return err
		}
	}
	return nil
}
