package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// biasAddr is the address of the score bias of query i of head h of
// sequence b at key j: the bias's own axes, aligned from the right with
// the scores [B, H, S, N], index 0 along a size-1 (broadcast) axis, so
// that its strides come from the bias value's shape.
func (k *kgen) biasAddr(bias *ir.Value, b, h, i, j ix) (string, error) {
	sh := shapeOf(bias)
	idx := []ix{b, h, i, j}[4-len(sh):]
	for a := range len(sh) - 1 {
		if sh[a].isConst(1) {
			idx[a] = ixc(0)
		}
	}
	return k.addr(bias, idx)
}

// emitBias writes a tensor-core attention kernel's score bias into its
// context: BIAS, whether there is one, and with it brow(b, h, i), the
// bias row of query i of head h of sequence b; bld(r, j), key j of row r
// as a float; and smodb(s, x), the score modifier of raw score s with
// bias x: softcap(s * scale + BiasScale * x) in log2 units (the templates
// call it in place of smod, fz_att_smod).
func (m *flashModel) emitBias(w *writer) error {
	w.line("// Score bias: added to the scaled score before softcap (smodb).")
	w.line("static constexpr bool BIAS = %t;", m.bias != nil)
	if m.bias == nil {
		return nil
	}
	k, at := m.k, m.at
	bw, err := k.viewOf(m.bias)
	if err != nil {
		return err
	}
	stride, ok := bw.simpleAxis(len(shapeOf(m.bias)) - 1)
	if !ok {
		return fmt.Errorf("attention kernel %s: the bias %s is not strided along the keys", k.pk.Name, m.bias.Ref())
	}
	row, err := k.biasAddr(m.bias, ixv("b"), ixv("h"), ixv("i"), ixc(0))
	if err != nil {
		return err
	}
	bt := m.bias.Type.DType
	w.line("%s const %s* brow(i64 b, i64 h, i64 i) const { return %s; }", ctxMember, ctype(bt), row)
	w.line("%s float bld(const %s* r, i64 j) const { return fz_ld_%s(r + j * (%s)); }", ctxMember, ctype(bt), dsuf(bt), ixp(stride))
	const log2e = 1.4426950408889634
	if at.Softcap != 0 {
		w.line("%s float smodb(float s, float x) const { return %s * fz_att_tanh(fmaf(s, %s, x * %s)); }", ctxMember,
			flit(at.Softcap*log2e), flit(at.Scale/at.Softcap), flit(at.BiasScale/at.Softcap))
	} else {
		w.line("%s float smodb(float s, float x) const { return fmaf(s, %s, x * %s); }", ctxMember, flit(at.Scale*log2e), flit(at.BiasScale*log2e))
	}
	return nil
}
