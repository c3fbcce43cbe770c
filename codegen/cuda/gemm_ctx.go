package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// emitParamFields writes the kernel's parameters as the fields of its
// context type (aggregate-initialised from the body's parameters, in
// order: ctxInit).
func (k *kgen) emitParamFields(w *writer) {
	for i, p := range k.params {
		if p.Value == nil {
			w.line("i64 %s;", dimParam(p.Dim))
			continue
		}
		t := ctype(p.Value.Type.DType)
		if k.written[p.Value] {
			w.line("%s* p%d;", t, i)
		} else {
			w.line("const %s* p%d;", t, i)
		}
	}
}

// ctxInit declares name, the body's context of type @BODY@_ctx, from the
// body's parameters.
func (k *kgen) ctxInit(name string) string {
	return fmt.Sprintf("const @BODY@_ctx %s = {%s};", name, k.bodyArgs())
}

// emitContext writes the matmul kernel's context type, @BODY@_ctx, that
// the GEMV tile of device/gemv.cuh and the mma.sync main loop of
// device/gemm_mma.cuh read: its parameters, how its operands are stored
// and loaded, their addressing, the GEMV tile's shape and the mma.sync
// tile's slots (nslot).
func (g *gemmModel) emitContext(w *writer) error {
	k := g.k
	w.open("struct @BODY@_ctx {")
	k.emitParamFields(w)
	at, bt := ctype(g.av.dt), ctype(g.bv.dt)
	w.line("using AT = %s;", at)
	w.line("using BT = %s;", bt)
	w.line("FZ_DEV float lda(const AT* p) { return fz_ld_%s(p); }", dsuf(g.av.dt))
	w.line("FZ_DEV void lda8(float* v, const AT* p) { fz_ld8_%s(v, p); }", dsuf(g.av.dt))
	w.line("FZ_DEV float ldb(const BT* p) { return fz_ld_%s(p); }", dsuf(g.bv.dt))
	w.line("FZ_DEV void ldb8(float* v, const BT* p) { fz_ld8_%s(v, p); }", dsuf(g.bv.dt))
	raw := g.bv.dt == ir.BF16 || g.bv.dt == ir.F16
	if raw {
		w.line("FZ_DEV void unpackb(float* v, uint4 r) { fz_unpack_%s(v, r); }", dsuf(g.bv.dt))
	}
	w.line("static constexpr bool AK = %t, BK = %t, BN = %t, RAW16 = %t, BIG = %t;", g.aK, g.bK, g.bN, raw && g.bN, k.nt > 256)
	w.line("static constexpr int AVEC = %d, BVEC = %d, TN = %d, STAGED = %d;", vecAlign(g.av.dt), vecAlign(g.bv.dt), g.gemvTN(), gemvStaged)
	w.line("// Element (r, k) of unit ub's left operand, (k, n) of its right operand.")
	w.open("__device__ __forceinline__ const AT* a(i64 ub, i64 r, i64 k) const {")
	coords := g.coords(w, "ar", ixv("ub"), ixv("r"))
	a, err := k.addr(g.a, g.operandIndex(g.a, coords[:len(coords)-1], [2]ix{coords[len(coords)-1], ixv("k")}))
	if err != nil {
		return err
	}
	w.line("return %s;", a)
	w.close()
	w.open("__device__ __forceinline__ const BT* b(i64 ub, i64 k, i64 n) const {")
	b, err := k.addr(g.b, g.operandIndex(g.b, g.unitBatch(w, ixv("ub")), [2]ix{ixv("k"), ixv("n")}))
	if err != nil {
		return err
	}
	w.line("return %s;", b)
	w.close()
	if g.gemvMMA() {
		g.emitRingConstants(w)
	}
	if g.mmaAble() {
		g.emitNSlot(w)
	}
	w.close("};")
	return nil
}

// emitRingConstants writes the context's part that the tensor-core GEMV
// (device/gemv_mma.cuh, gemv_wgmma.cuh) and the wgmma GEMM
// (device/gemm_wgmma.cuh) read: their rings' shapes, the operands' dtype,
// and how the weight's K axis is strided.
func (g *gemmModel) emitRingConstants(w *writer) {
	w.line("static constexpr bool BF16 = %t;", g.bv.dt == ir.BF16)
	if g.gemvWGMMA() {
		w.line("static constexpr int GV_TN = %d, GV_ROWS = %d, GV_STAGES = %d, GV_STAGE_BYTES = %d;", gemvRowTN, plan.GemvRingRows, plan.GemvWGStages, plan.GemvWGStageBytes)
	} else {
		w.line("static constexpr int GV_TN = %d, GV_ROWS = %d, GV_STAGES = %d, GV_STAGE_BYTES = %d, GV_XROW_BYTES = %d;", gemvRowTN, plan.GemvRingRows, plan.GemvRingStages, plan.GemvRingStageBytes, plan.GemvRingXRowBytes)
		return
	}
	bs := shapeOf(g.b)
	kstride, simple := g.bv.simpleAxis(len(bs) - 2)
	w.line("static constexpr bool BSIMPLE = %t;", simple)
	if simple {
		w.line("// The weight's K stride.")
		w.line("__device__ __forceinline__ i64 bks() const { return %s; }", ixp(kstride))
	}
	if !g.gemmWGMMA() {
		return
	}
	w.line("static constexpr int WG_K = %d, WG_ROWS = %d, WG_STAGES = %d, WG_STAGE_BYTES = %d, WG_RES_STRIDE = %d;", plan.GemmWGK, plan.GemmWGRows, plan.GemmWGStages, plan.GemmWGStageBytes, gemmWGResStride)
	if g.gemmWGTMA() {
		w.line("// The weight's columns.")
		w.line("__device__ __forceinline__ i64 bcols() const { return %s; }", ixp(bs[len(bs)-1]))
	}
}
