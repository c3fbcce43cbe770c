package cuda

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// emitParamFields writes the kernel's parameters as the fields of its
// context type (aggregate-initialised from the body's parameters, in
// order: ctxInit).
func (k *kgen) emitParamFields(w *writer) {
	for i, p := range k.params {
		switch {
		case p.Map != nil:
			w.line("const fz_tmap* %s;", k.fieldName(i))
			continue
		case p.Value == nil:
			w.line("i64 %s;", k.fieldName(i))
			continue
		}
		t := ctype(p.Value.Type.DType)
		if k.written[p.Value] {
			w.line("%s* %s;", t, k.fieldName(i))
		} else {
			w.line("const %s* %s;", t, k.fieldName(i))
		}
	}
}

// fieldName is the name of parameter i as a field of the context type, as
// in the body functions.
func (k *kgen) fieldName(i int) string {
	if p := k.params[i]; p.Dim != "" {
		return dimParam(p.Dim)
	}
	return "p" + strconv.Itoa(i)
}

// cIdent matches a C identifier.
var cIdent = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// readsField reports whether C text names a field of the context type.
func (k *kgen) readsField(text string) bool {
	fields := map[string]bool{}
	for i := range k.params {
		fields[k.fieldName(i)] = true
	}
	for _, id := range cIdent.FindAllString(text, -1) {
		if fields[id] {
			return true
		}
	}
	return false
}

// ctxInit declares name, the body's context of type @BODY@_ctx, from the
// body's parameters.
func (k *kgen) ctxInit(name string) string {
	return fmt.Sprintf("const @BODY@_ctx %s = {%s};", name, k.bodyArgs())
}

// ctxMember qualifies the member functions of a context type that read its
// fields.
const ctxMember = "__device__ __forceinline__"

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
	w.line("// Element (r, k) of unit ub's left operand.")
	w.open("%s const AT* a(i64 ub, i64 r, i64 k) const {", ctxMember)
	coords := g.coords(w, "ar", ixv("ub"), ixv("r"))
	a, err := k.addr(g.a, g.operandIndex(g.a, coords[:len(coords)-1], [2]ix{coords[len(coords)-1], ixv("k")}))
	if err != nil {
		return err
	}
	w.line("return %s;", a)
	w.close()
	w.line("// Element (k, n) of unit ub's right operand.")
	w.open("%s const BT* b(i64 ub, i64 k, i64 n) const {", ctxMember)
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
		w.line("%s i64 bks() const { return %s; }", ctxMember, ixp(kstride))
	}
	if !g.gemmWGMMA() {
		return
	}
	w.line("static constexpr int WG_K = %d, WG_ROWS = %d, WG_STAGES = %d, WG_STAGE_BYTES = %d, WG_RES_STRIDE = %d;", plan.GemmWGK, plan.GemmWGRows, plan.GemmWGStages, plan.GemmWGStageBytes, gemmWGResStride)
	if g.gemmWGTMA() {
		w.line("// The weight's columns.")
		w.line("%s i64 bcols() const { return %s; }", ctxMember, ixp(bs[len(bs)-1]))
	}
}
