package cuda

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// The CUDA-core attention kernel: split-KV decode with the merge of its
// splits, tiled prefill, and tiled prefill over packed queries (varlen),
// for the attention the tensor-core kernels do not take
// (codegen.FlashAttention). Its device code is the templates of
// the device library attention_simt.cuh, instantiated per kernel with a
// generated context type: the kernel's shapes and variant (scale,
// softcap, causal and sliding-window mask), its key sources' lengths and
// K and V rows (contiguous, paged or ragged caches, a cascade's prefix),
// its query loads and output stores.

// Attention kernel tiles: rows of queries are processed attQP at a time
// against tiles of attBC keys staged in shared memory; a prefill block
// takes attQB queries (the launch pass's query blocks).
const (
	attQP = 8
	attBC = 32
	attQB = 128
)

// attSource is one (K, V) pair of an attention node's keys, in key order.
type attSource struct {
	k, v *ir.Value
	kv   *view
	// prefix is the shared prefix of a cascade: one sequence for the batch.
	prefix bool
}

// attModel is an attention node's shapes and key sources.
type attModel struct {
	k      *kgen
	at     *ir.Attention
	q, out *ir.Value
	// dh is the head dim; h and g the query and kv heads, grp = h/g.
	dh, h, g, grp int64
	sq, b         ix
	srcs          []attSource
	kvDType       ir.DType
	// bias is the score bias, nil for none.
	bias *ir.Value
	// indptr is the body name of the packed queries' indptr (varlen
	// attention, q [H, N, Dh]), "" for queries [B, H, S, Dh].
	indptr string
}

// attModel reads the kernel's attention node: its shapes, key sources and
// dtypes.
func (k *kgen) attModel() (*attModel, error) {
	n := k.pk.Nodes[0]
	if n.Op != ir.OpAttention || len(k.pk.Nodes) != 1 {
		return nil, fmt.Errorf("attention kernel %s: unexpected ops", k.pk.Name)
	}
	m := &attModel{k: k, at: n.Attr.Attn, q: n.Args[0], out: n.Outs[0]}
	qs := shapeOf(m.q)
	ks := shapeOf(n.AttentionKeys())
	if m.at.Varlen {
		// q [H, N, Dh] packed: the batch is K's sequences, N the tokens.
		qs = []poly{ks[0], qs[0], qs[1], qs[2]}
		var err error
		if m.indptr, err = k.name(m.q.Packed.Indptr); err != nil {
			return nil, err
		}
	}
	dh, ok := qs[3].value()
	if !ok {
		return nil, fmt.Errorf("attention kernel %s: the head dim must be a constant", k.pk.Name)
	}
	m.dh = dh
	m.b, m.sq = ixp(qs[0]), ixp(qs[2])
	h, okh := qs[1].value()
	g, okg := ks[1].value()
	if !okh || !okg || g == 0 || h%g != 0 {
		return nil, fmt.Errorf("attention kernel %s: heads must be constants, kv heads dividing query heads", k.pk.Name)
	}
	m.h, m.g, m.grp = h, g, h/g
	m.bias = n.AttentionBias()
	kvs := n.AttentionKV()
	for i := 0; i < len(kvs); i += 2 {
		s := attSource{k: kvs[i], v: kvs[i+1], prefix: m.at.Cascade && i == 0}
		var err error
		if s.kv, err = k.viewOf(s.k); err != nil {
			return nil, err
		}
		if _, err := k.viewOf(s.v); err != nil {
			return nil, err
		}
		m.srcs = append(m.srcs, s)
	}
	m.kvDType = m.srcs[0].kv.dt
	for _, v := range append([]*ir.Value{m.q, m.out}, n.Args...) {
		if err := checkDType(v); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// srcLen is the number of keys source s has for sequence b.
func (m *attModel) srcLen(s attSource, b ix) (ix, error) {
	t := dimIx(s.k.Type.Shape[m.at.KeyAxis()])
	if s.prefix {
		return t, nil
	}
	if r := s.k.Ragged; r != nil && r.Axis == 2 {
		n, err := m.k.seqLen(r, b)
		if err != nil {
			return ix{}, err
		}
		return ixMin(n, t), nil
	}
	return t, nil
}

// batchOf is the source's batch index for sequence b.
func (s attSource) batchOf(b ix) ix {
	if v, ok := polyOf(s.k.Type.Shape[0]).value(); ok && v == 1 {
		return ixc(0)
	}
	return b
}

// emitContext writes the kernel's context type, @BODY@_ctx, that the
// templates of device/attention_simt.cuh read: its parameters, shapes,
// tiles and variant, the key sources' lengths and K and V rows, and the
// query loads and output stores.
func (m *attModel) emitContext(w *writer) error {
	k, at := m.k, m.at
	w.open("struct @BODY@_ctx {")
	k.emitParamFields(w)
	w.line("// Head dim, query heads, kv heads, query heads per kv head, key sources;")
	w.line("// query rows a pass, keys a tile, queries a prefill block, threads a block.")
	w.line("static constexpr int DH = %d, NH = %d, NG = %d, GRP = %d, NSRC = %d, QP = %d, BC = %d, QB = %d, NT = %d;", m.dh, m.h, m.g, m.grp, len(m.srcs), attQP, attBC, attQB, k.nt)
	w.line("// Score scale (on the queries), softcap (0: none), mask.")
	w.line("static constexpr float SCALE = %s, CAP = %s;", flit(at.Scale), flit(at.Softcap))
	w.line("static constexpr bool CAUSAL = %t, WINDOW = %t;", at.Causal, !at.Window.IsZero())
	if !at.Window.IsZero() {
		m.fn(w, "i64 window()", fmt.Sprintf("return %s;", dimIx(at.Window)))
	}
	if err := m.emitBias(w); err != nil {
		return err
	}
	w.line("// Batch, queries per sequence (varlen: every packed token).")
	m.fn(w, "i64 nb()", fmt.Sprintf("return %s;", m.b))
	m.fn(w, "i64 nsq()", fmt.Sprintf("return %s;", m.sq))
	if m.indptr != "" {
		w.line("// Packed queries: sequence b's tokens.")
		m.fn(w, "i64 qlen(i64 b)", fmt.Sprintf("return (i64)%s[b + 1] - (i64)%s[b];", m.indptr, m.indptr))
	}
	w.line("// Keys of each source for sequence b.")
	var lens writer
	for i, s := range m.srcs {
		n, err := m.srcLen(s, ixv("b"))
		if err != nil {
			return err
		}
		lens.line("n[%d] = %s;", i, n)
	}
	m.fn(w, "void lens(i64 b, i64 (&n)[NSRC])", lens.String())
	w.line("// The source of key t of kv head g, and its K and V rows' offsets in the")
	w.line("// source's buffers.")
	var krow writer
	for i, s := range m.srcs {
		last := i == len(m.srcs)-1
		if !last {
			krow.open("if (t < n[%d]) {", i)
		}
		bb := s.batchOf(ixv("b"))
		for c, v := range []*ir.Value{s.k, s.v} {
			vw, err := k.viewOf(v)
			if err != nil {
				return err
			}
			idx := []ix{bb, ixv("g"), ixv("t"), ixc(0)}
			if c == 0 && m.at.KeysT {
				idx = []ix{bb, ixv("g"), ixc(0), ixv("t")}
			}
			off, err := k.offset(vw, idx, nil)
			if err != nil {
				return err
			}
			krow.line("%s = %s;", [2]string{"rk", "rv"}[c], off)
		}
		krow.line("return %d;", i)
		if !last {
			krow.close()
			krow.line("t -= n[%d];", i)
		}
	}
	m.fn(w, "int krow(i64 b, i64 g, i64 t, const i64 (&n)[NSRC], i64& rk, i64& rv)", krow.String())
	if err := m.k.emitKeysT(w, m.at, m.srcs[0].k, len(m.srcs), func(decl, body string) { m.fn(w, decl, body) }); err != nil {
		return err
	}
	kd := dsuf(m.kvDType)
	w.line("// K and V: the element type, the alignment of an 8-element load, the")
	w.line("// buffers of source src, loads of one or 8 elements as floats.")
	w.line("using KT = %s;", ctype(m.kvDType))
	w.line("static constexpr int KVEC = %d;", vecAlign(m.kvDType))
	for c, name := range []string{"kbuf", "vbuf"} {
		var pick strings.Builder
		for i, s := range m.srcs {
			v := s.k
			if c == 1 {
				v = s.v
			}
			vw, err := k.viewOf(v)
			if err != nil {
				return err
			}
			p, err := k.name(vw.buf)
			if err != nil {
				return err
			}
			if i < len(m.srcs)-1 {
				fmt.Fprintf(&pick, "src == %d ? %s : ", i, p)
			} else {
				pick.WriteString(p)
			}
		}
		m.fn(w, "const KT* "+name+"(int src)", "return "+pick.String()+";")
	}
	w.line("FZ_DEV float ldkv(const KT* p) { return fz_ld_%s(p); }", kd)
	w.line("FZ_DEV void ldkv8(float* x, const KT* p) { fz_ld8_%s(x, p); }", kd)
	qt, ot := m.q.Type.DType, m.out.Type.DType
	w.line("// Queries and output: the element types, a load and a store as floats,")
	w.line("// the address of element d of query i of head h and of its output.")
	w.line("using QT = %s;", ctype(qt))
	w.line("using OT = %s;", ctype(ot))
	w.line("FZ_DEV float ldq(const QT* p) { return fz_ld_%s(p); }", dsuf(qt))
	w.line("FZ_DEV void sto(OT* p, float v) { fz_st_%s(p, v); }", dsuf(ot))
	qi := []ix{ixv("b"), ixv("h"), ixv("i"), ixv("d")}
	if m.indptr != "" {
		// Query i of sequence b is packed token indptr[b] + i.
		qi = []ix{ixv("h"), ixv(fmt.Sprintf("((i64)%s[b] + i)", m.indptr)), ixv("d")}
	}
	qa, err := k.addr(m.q, qi)
	if err != nil {
		return err
	}
	m.fn(w, "const QT* q(i64 b, i64 h, i64 i, int d)", "return "+qa+";")
	oa, err := k.addr(m.out, qi)
	if err != nil {
		return err
	}
	m.fn(w, "OT* out(i64 b, i64 h, i64 i, int d)", "return "+oa+";")
	w.close("};")
	return nil
}

// emitBias writes the score bias: BIAS, whether there is one, and with
// it its factor BSCALE (on the scaled scores), element type BT, load ldb
// and the address bias(b, h, i, j) of query i of head h at key j.
func (m *attModel) emitBias(w *writer) error {
	w.line("// Score bias (added to the scaled score before softcap), its factor.")
	w.line("static constexpr bool BIAS = %t;", m.bias != nil)
	if m.bias == nil {
		return nil
	}
	bt := m.bias.Type.DType
	w.line("static constexpr float BSCALE = %s;", flit(m.at.BiasScale))
	w.line("using BT = %s;", ctype(bt))
	w.line("FZ_DEV float ldb(const BT* p) { return fz_ld_%s(p); }", dsuf(bt))
	a, err := m.k.biasAddr(m.bias, ixv("b"), ixv("h"), ixv("i"), ixv("j"))
	if err != nil {
		return err
	}
	m.fn(w, "const BT* bias(i64 b, i64 h, i64 i, i64 j)", "return "+a+";")
	return nil
}

// fn writes the context's function decl (its result, name and parameters)
// with body, its lines: a const member where the body reads a field of the
// context, static otherwise (see device/attention_simt.cuh: a member that
// reads no field costs the kernel the non-coherent loads of K and V).
func (m *attModel) fn(w *writer, decl, body string) {
	body = strings.TrimSuffix(body, "\n")
	head := "FZ_DEV " + decl
	if m.k.readsField(body) {
		head = ctxMember + " " + decl + " const"
	}
	if !strings.Contains(body, "\n") {
		w.line("%s { %s }", head, body)
		return
	}
	w.open("%s {", head)
	w.raw(body)
	w.close()
}

// attentionKernel generates an Attention kernel: a split-KV decode entry
// and its merge, and a tiled prefill entry, the launch variant picking;
// over packed queries the varlen entry alone.
func (k *kgen) attentionKernel() (*generated, error) {
	m, err := k.attModel()
	if err != nil {
		return nil, err
	}
	var ctx writer
	if err := m.emitContext(&ctx); err != nil {
		return nil, err
	}
	init := "  " + k.ctxInit("c") + "\n"
	if m.indptr != "" {
		// The launch's work items are query tiles of the kernel's QB.
		if l := k.pk.Launch; l != nil && l.Tile[0] != attQB {
			return nil, fmt.Errorf("attention kernel %s: varlen query tiles of %d rows, the kernel's are %d", k.pk.Name, l.Tile[0], attQB)
		}
		return &generated{
			libs:     []string{libAttentionSIMT},
			helpers:  ctx.String(),
			entries:  []entry{{"", init + "  fz_att_simt_varlen(c);\n"}},
			variants: map[plan.Variant][]string{plan.VariantVarlenSIMT: {""}},
			variant:  plan.VariantVarlenSIMT,
		}, nil
	}
	dec := init + "  fz_att_simt_decode(c, fz_workspace);\n"
	mer := init + "  fz_att_simt_merge(c, fz_workspace);\n"
	pre := init + "  fz_att_simt_prefill(c);\n"
	gen := &generated{
		libs:     []string{libAttentionSIMT},
		helpers:  ctx.String(),
		entries:  []entry{{"", dec}, {mergeSuffix, mer}, {"_prefill", pre}},
		variants: map[plan.Variant][]string{plan.VariantDecodeSIMT: {"", mergeSuffix}, plan.VariantPrefillSIMT: {"_prefill"}},
		variant:  plan.VariantDecodeSIMT,
	}
	if l := k.pk.Launch; l != nil {
		if l.Variant.Prefill() {
			// The plan's entry is its name: the prefill body under it.
			gen.entries = []entry{{"", pre}, {"_decode", dec}, {"_decode" + mergeSuffix, mer}}
			gen.variants = map[plan.Variant][]string{plan.VariantPrefillSIMT: {""}, plan.VariantDecodeSIMT: {"_decode", "_decode" + mergeSuffix}}
			gen.variant = plan.VariantPrefillSIMT
		} else if l.Splits <= 1 && !k.pk.Nodes[0].Attr.Attn.Cascade {
			// No partials: no merge.
			gen.variants[plan.VariantDecodeSIMT] = []string{""}
		}
	}
	return gen, nil
}

// mergeSuffix names the second entry of the CUDA-core split-KV decode
// attention (the merge of its splits), as the Go launch code expects.
const mergeSuffix = "_merge"
