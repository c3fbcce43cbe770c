package cuda

import (
	"fmt"
	"math"
	"strings"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// The attention kernels: FlashAttention-2 prefill and split-KV
// Flash-Decoding over mma.sync tensor cores, and the prefill on wgmma
// (sm_90a), generic templates in the device libraries attention_flash.cuh
// and attention_wg.cuh (device/) instantiated per kernel with a generated
// context type: the kernel's addressing (query rows, K and
// V rows through contiguous, paged or ragged caches and a cascade's shared
// prefix, output stores, sequence lengths) and its variant as FlexAttention
// style modifiers (smod: scale and softcap of a raw score; visible: the
// causal and sliding-window mask as a function of the query-key distance;
// kbounds and tile_masked: the key range a block of queries can see, for
// tile skipping, and whether a tile needs the element-wise mask).

// flashSrc is one (K, V) pair of an attention node, in key order.
type flashSrc struct{ k, v *ir.Value }

// flashModel is an attention kernel's shapes, key sources and variant.
type flashModel struct {
	k      *kgen
	n      *ir.Node
	at     *ir.Attention
	q, out *ir.Value
	// srcs are a cascade's shared prefix then the sequence's own keys, or
	// the own keys alone.
	srcs []flashSrc
	// bias is the score bias, nil for none.
	bias *ir.Value
	// dh is the head dim, dp the head dim rounded up to the mma k step
	// (16); grp is H/G, the query heads per kv head.
	dh, dp, grp int64
	bf          bool
	// prefixPass is set when a prefix pass (fz_att_prefix) attends the
	// prefix of a cascade before the decode kernel (hasPrefixPass).
	prefixPass bool
	// tmap is the body's name of the tensor map parameter of the own keys'
	// and values' rows (codegen.RowMap) at head dims of whole 128-byte
	// lines, which the decode copies through; empty at other head dims.
	tmap string
}

func (k *kgen) flashModel() (*flashModel, error) {
	name := k.pk.Name
	if len(k.pk.Nodes) != 1 {
		return nil, fmt.Errorf("attention kernel %s: want one attention node", name)
	}
	n := k.pk.Nodes[0]
	if err := codegen.FlashAttention(n); err != nil {
		return nil, fmt.Errorf("attention kernel %s: %w", name, err)
	}
	m := &flashModel{k: k, n: n, at: n.Attr.Attn, q: n.Args[0], out: n.Outs[0]}
	kvs := n.AttentionKV()
	for i := 0; i < len(kvs); i += 2 {
		m.srcs = append(m.srcs, flashSrc{k: kvs[i], v: kvs[i+1]})
	}
	if m.bias = n.AttentionBias(); m.bias != nil && len(m.srcs) > 1 {
		return nil, fmt.Errorf("attention kernel %s: a score bias over a cascade's keys", name)
	}
	qs := shapeOf(m.q)
	m.dh, _ = qs[3].value()
	m.dp = (m.dh + 15) / 16 * 16
	grp, ok := qs[1].div(shapeOf(m.srcs[len(m.srcs)-1].k)[1])
	if m.grp, _ = grp.value(); !ok || m.grp < 1 {
		return nil, fmt.Errorf("attention kernel %s: the query heads %v are not a constant multiple of the kv heads", name, qs[1])
	}
	m.bf = m.q.Type.DType == ir.BF16
	if err := checkDType(m.out); err != nil {
		return nil, fmt.Errorf("attention kernel %s: %w", name, err)
	}
	if k.inKernel[m.q] {
		return nil, fmt.Errorf("attention kernel %s: the queries are computed in the kernel", name)
	}
	qv, err := k.viewOf(m.q)
	if err != nil {
		return nil, err
	}
	if !qv.contig(3) {
		return nil, fmt.Errorf("attention kernel %s: the queries' head dim is not contiguous in memory", name)
	}
	for _, s := range m.srcs {
		for _, v := range []*ir.Value{s.k, s.v} {
			if k.inKernel[v] {
				return nil, fmt.Errorf("attention kernel %s: %s is computed in the kernel", name, v.Ref())
			}
			w, err := k.viewOf(v)
			if err != nil {
				return nil, err
			}
			if !w.contig(3) {
				return nil, fmt.Errorf("attention kernel %s: the head dim of %s is not contiguous in memory", name, v.Ref())
			}
		}
	}
	if _, err := k.viewOf(m.out); err != nil {
		return nil, err
	}
	if k.nt%32 != 0 || k.nt < 32 || k.nt > 1024 {
		return nil, fmt.Errorf("attention kernel %s: a block of %d threads: want whole warps", name, k.nt)
	}
	return m, nil
}

// Key tiles of the prefill: BC keys, sized so that one K and one V tile
// fit the 48 KiB of static shared memory and the score fragments the
// registers. (Decode streams 16-key tiles per warp through a ring of
// dynamic shared memory: plan.DecodeRing.)
func (m *flashModel) prefillBC() int64 {
	if m.dp <= 128 {
		return 64
	}
	return 32
}

// prefillWPR is the number of warps sharing a 16-row slice of a prefill
// tile (splitting its head dim): 2 past a head dim of 128, where the
// output accumulators and query fragments of a whole row would not fit the
// registers.
func (m *flashModel) prefillWPR() int64 {
	if m.dp > 128 && (m.k.nt/32)%2 == 0 {
		return 2
	}
	return 1
}

// prefillWG checks a wgmma prefill launch against the ring of
// plan.PrefillWGBytes and returns its keys a step and stages.
func (m *flashModel) prefillWG(l *plan.Launch) (bc, stages int64, err error) {
	if m.at.KeysT {
		return 0, 0, fmt.Errorf("attention kernel %s: the wgmma prefill stages keys as rows, not keys stored transposed", m.k.pk.Name)
	}
	if !plan.PrefillWGHeadDim(m.dh) {
		return 0, 0, fmt.Errorf("attention kernel %s: the wgmma prefill takes head dims of 64, 128 or 256, not %d", m.k.pk.Name, m.dh)
	}
	bc = plan.PrefillWGKeys(m.dh)
	if l.Block != plan.PrefillWGThreads || l.Tile != [2]int64{plan.PrefillWGRows, bc} || l.Stages < 2 || l.SharedBytes < plan.PrefillWGBytes(m.dh, l.Stages) {
		st := max(l.Stages, 2)
		return 0, 0, fmt.Errorf("attention kernel %s: a wgmma prefill launch of %d threads, tile %v, %d stages in %d bytes of shared memory: want %d threads, tile [%d %d], 2 stages or more, and %d bytes for %d stages",
			m.k.pk.Name, l.Block, l.Tile, l.Stages, l.SharedBytes, plan.PrefillWGThreads, plan.PrefillWGRows, bc, plan.PrefillWGBytes(m.dh, st), st)
	}
	return bc, l.Stages, nil
}

// prefixSuffix names a cascade decode kernel's prefix pass entry, launched
// before the kernel's decode entry.
const prefixSuffix = "_prefix"

// flashBatchIndex is source value v's index on its batch axis for sequence b: 0
// for a source every sequence shares.
func flashBatchIndex(v *ir.Value, b ix) ix {
	if shapeOf(v)[0].isConst(1) {
		return ixc(0)
	}
	return b
}

// srcLen is the number of keys source s has for sequence b: its token
// axis, or the sequence's length where K or V is ragged (the smaller of
// the two, as the reference takes it).
func (m *flashModel) srcLen(s flashSrc, b ix) (ix, error) {
	n := dimIx(m.n.KeyRows(s.k)[2])
	for _, v := range []*ir.Value{s.k, s.v} {
		r := v.Ragged
		if r == nil {
			continue
		}
		ln, err := m.k.seqLen(r, flashBatchIndex(v, b))
		if err != nil {
			return ix{}, fmt.Errorf("attention kernel %s: %w", m.k.pk.Name, err)
		}
		n = ixMin(n, ixv("fz_max64("+ln.String()+", 0)"))
	}
	return n, nil
}

// hasPrefixPass reports whether the decode variant of the kernel launches
// a prefix pass (fz_att_prefix) before the decode kernel, attending the
// prefix of a cascade once per kv head for the whole batch: when every
// sequence shares the prefix (batch dim 1) and the launch plan, when it is
// a decode launch, has prefix splits (plan.Launch.PrefixSplits). Otherwise
// the decode kernel attends the prefix keys with the sequence's own.
func (m *flashModel) hasPrefixPass(l *plan.Launch) bool {
	shared := len(m.srcs) == 2 && shapeOf(m.srcs[0].k)[0].isConst(1) && shapeOf(m.srcs[0].v)[0].isConst(1)
	return shared && (l == nil || l.Variant != plan.VariantDecode || l.PrefixSplits > 0)
}

// emitContext writes the kernel's context type: its parameters as fields
// (aggregate-initialised from the body's parameters, in order) and the
// member functions the templates call. chunk is the decode launch's fixed
// split size (0: none) and nps its prefix split count, for the prefix
// pass's split (m.prefixPass).
func (m *flashModel) emitContext(w *writer, chunk, nps int64) error {
	k := m.k
	w.open("struct @BODY@_ctx {")
	k.emitParamFields(w)
	w.line("static constexpr int GRP = %d;", m.grp)
	if l := k.pk.Launch; l != nil && l.Variant == plan.VariantPrefill && l.WGMMA {
		w.line("// Whether the wgmma prefill's blocks take their items in turn (fz_att_wg_item).")
		w.line("static constexpr bool PERSIST = %t;", l.Persistent)
	}
	w.line("// Whether a prefix pass attends the prefix the batch shares (fz_att_prefix).")
	w.line("static constexpr bool PREFIX = %t;", m.prefixPass)
	if m.prefixPass {
		w.line("// Its split count and size (fz_att_psplit) with slots of workspace.")
		w.line("%s i64 pslots(i64 npre, i64 slots, i64& chunk) const { return fz_att_psplit<%d, %d, %d>(npre, slots, chunk); }",
			ctxMember, chunk, nps, plan.PrefixMinKeys)
	}
	qs := shapeOf(m.q)
	own := m.srcs[len(m.srcs)-1]
	w.line("// Batch, query heads, kv heads, queries per sequence.")
	w.line("%s i64 nb() const { return %s; }", ctxMember, ixp(qs[0]))
	w.line("%s i64 nh() const { return %s; }", ctxMember, ixp(qs[1]))
	w.line("%s i64 ng() const { return %s; }", ctxMember, ixp(shapeOf(own.k)[1]))
	w.line("%s i64 nsq() const { return %s; }", ctxMember, ixp(qs[2]))
	// Key counts.
	pre := ixc(0)
	if len(m.srcs) == 2 {
		var err error
		if pre, err = m.srcLen(m.srcs[0], ixv("b")); err != nil {
			return err
		}
	}
	ownLen, err := m.srcLen(own, ixv("b"))
	if err != nil {
		return err
	}
	w.line("// Keys of sequence b: the shared prefix's, then its own.")
	w.line("%s i64 npre(i64 b, i64 g) const { return %s; }", ctxMember, pre)
	w.line("%s i64 nown(i64 b, i64 g) const { return %s; }", ctxMember, ownLen)
	if err := m.emitRows(w); err != nil {
		return err
	}
	// The base of the decode's tensor map: the lower of the own keys' and
	// values' buffers (fz_att_bulk_tile checks each tile's rows against it).
	bk, err := k.name(codegen.Buffer(own.k))
	if err != nil {
		return err
	}
	bv, err := k.name(codegen.Buffer(own.v))
	if err != nil {
		return err
	}
	seq, err := m.keySequence()
	if err != nil {
		return err
	}
	member := func(decl, body string) { w.line("%s %s const { %s }", ctxMember, decl, body) }
	if err := m.k.emitKeysT(w, m.at, m.srcs[0].k, len(m.srcs), member); err != nil {
		return err
	}
	w.line("// Whether every key's K and V rows lie DH elements after the key before's")
	w.line("// (one source, unpaged): the wgmma prefill's tensor maps.")
	w.line("static constexpr bool KSEQ = %t;", seq)
	w.line("// The base of the tensor maps: the lower of the own keys' and values' buffers.")
	if bk == bv {
		w.line("%s const u16* tbase() const { return (const u16*)%s; }", ctxMember, bk)
	} else {
		w.line("%s const u16* tbase() const { return (const u16*)%s < (const u16*)%s ? (const u16*)%s : (const u16*)%s; }", ctxMember, bk, bv, bk, bv)
	}
	qa, err := k.addr(m.q, []ix{ixv("b"), ixv("h"), ixv("i"), ixc(0)})
	if err != nil {
		return err
	}
	w.line("// The host-encoded tensor map of the rows from tbase() (codegen.RowMap), or null.")
	tm := "(const fz_tmap*)0"
	if m.tmap != "" {
		tm = m.tmap
	}
	w.line("%s const fz_tmap* tmap() const { return %s; }", ctxMember, tm)
	w.line("// Query i of head h, and the output stores.")
	w.line("%s const u16* qrow(i64 b, i64 h, i64 i) const { return (const u16*)(%s); }", ctxMember, qa)
	od := m.out.Type.DType
	oa, err := k.addr(m.out, []ix{ixv("b"), ixv("h"), ixv("i"), ixv("d")})
	if err != nil {
		return err
	}
	w.line("%s void ost(i64 b, i64 h, i64 i, int d, float v) const { fz_st_%s(%s, v); }", ctxMember, dsuf(od), oa)
	ov, _ := k.viewOf(m.out)
	w.open("%s void ost2(i64 b, i64 h, i64 i, int d, float v0, float v1) const {", ctxMember)
	if (od == ir.BF16 || od == ir.F16) && ov.contig(3) {
		w.line("%s* p = %s;", ctype(od), oa)
		w.line("if (d + 1 < %d && fz_aligned(p, 4)) { *(u32*)p = fz_pack_%s(v0, v1); return; }", m.dh, dsuf(od))
	}
	w.line("ost(b, h, i, d, v0);")
	w.line("if (d + 1 < %d) ost(b, h, i, d + 1, v1);", m.dh)
	w.close()
	m.emitModifiers(w)
	if err := m.emitBias(w); err != nil {
		return err
	}
	w.close("};")
	return nil
}

// keySequence reports whether the kernel's keys have one source whose K
// and V rows are each a row of the head dim, key after key: the token axis
// one digit of stride Dh and the head dim contiguous, not through a paged
// or ragged cache (nor keys stored transposed, columns).
func (m *flashModel) keySequence() (bool, error) {
	if len(m.srcs) != 1 || m.at.KeysT {
		return false, nil
	}
	for _, v := range []*ir.Value{m.srcs[0].k, m.srcs[0].v} {
		w, err := m.k.viewOf(v)
		if err != nil {
			return false, err
		}
		st, ok := w.simpleAxis(2)
		if !ok || !st.isConst(m.dh) || !w.contig(3) {
			return false, nil
		}
	}
	return true, nil
}

// emitRows writes the context's K and V rows: row, and its two halves
// rkeyp (the address of the one memory word addressing a key's row reads:
// a paged cache's page-table entry; null for other layouts) and rrow (the
// address from that word), so that the decode loop can fetch the word
// ahead of the row's copy. KEYS says whether any key has such a word.
func (m *flashModel) emitRows(w *writer) error {
	k := m.k
	at := func(v *ir.Value) []ix { return []ix{flashBatchIndex(v, ixv("b")), ixv("g"), ixv("j"), ixc(0)} }
	if m.at.KeysT {
		// A key's column: its dim 0.
		vk := m.srcs[0].k
		at = func(v *ir.Value) []ix {
			if v == vk {
				return []ix{flashBatchIndex(v, ixv("b")), ixv("g"), ixc(0), ixv("j")}
			}
			return []ix{flashBatchIndex(v, ixv("b")), ixv("g"), ixv("j"), ixc(0)}
		}
	}
	// Each source's page-table entry (nil where unpaged); K and V share
	// their append's table.
	entries := make([]*ix, len(m.srcs))
	paged := false
	for i, s := range m.srcs {
		e, ok, err := k.pageOf(s.k, at(s.k))
		if err != nil {
			return err
		}
		if ok {
			entries[i], paged = &e, true
		}
	}
	// Both halves branch on the source the key belongs to (the prefix's
	// keys first) alike.
	each := func(body func(i int) error) error {
		for i := range m.srcs {
			last := i == len(m.srcs)-1
			if !last {
				w.open("if (j < npre) {")
			}
			if err := body(i); err != nil {
				return err
			}
			if !last {
				w.close()
				w.line("j -= npre;")
			}
		}
		return nil
	}
	w.line("// Row of key j (prefix keys first) of K (c = 0) or V (c = 1); rkeyp is")
	w.line("// the address of the word it reads (a page-table entry; null for")
	w.line("// unpaged keys), rrow the row from that word.")
	w.line("static constexpr bool KEYS = %t;", paged)
	// The rows of unpaged keys of static lengths are known before the
	// kernel before this one has finished (no word to read): the decode
	// asks L2 for its first ones while it waits (fz_att_ahead), along the
	// rows (not keys stored transposed, whose rows are columns).
	ragged := false
	for _, s := range m.srcs {
		ragged = ragged || s.k.Ragged != nil || s.v.Ragged != nil
	}
	w.line("static constexpr bool AHEAD = %t;", !paged && !ragged && !m.at.KeysT)
	w.open("%s const u16* row(int c, i64 b, i64 g, i64 j, i64 npre) const {", ctxMember)
	w.line("const int* e = rkeyp(b, g, j, npre);")
	w.line("return rrow(e ? *e : 0, c, b, g, j, npre);")
	w.close()
	if !paged {
		w.line("%s const int* rkeyp(i64 b, i64 g, i64 j, i64 npre) const { return nullptr; }", ctxMember)
	} else {
		w.open("%s const int* rkeyp(i64 b, i64 g, i64 j, i64 npre) const {", ctxMember)
		if err := each(func(i int) error {
			e := "nullptr"
			if entries[i] != nil {
				e = entries[i].String()
			}
			w.line("return %s;", e)
			return nil
		}); err != nil {
			return err
		}
		w.close()
	}
	key := ixv("key")
	w.open("%s const u16* rrow(int key, int c, i64 b, i64 g, i64 j, i64 npre) const {", ctxMember)
	if err := each(func(i int) error {
		var ptrs [2]string
		pk := &key
		if entries[i] == nil {
			pk = nil
		}
		for c, v := range []*ir.Value{m.srcs[i].k, m.srcs[i].v} {
			a, err := k.addrAt(v, at(v), pk)
			if err != nil {
				return err
			}
			ptrs[c] = a
		}
		w.line("return c == 0 ? (const u16*)(%s) : (const u16*)(%s);", ptrs[0], ptrs[1])
		return nil
	}); err != nil {
		return err
	}
	w.close()
	return nil
}

// emitModifiers writes the variant: the score modifier (scale, softcap;
// the result in log2 units) and the mask with its tile-level forms.
func (m *flashModel) emitModifiers(w *writer) {
	at := m.at
	const log2e = 1.4426950408889634
	w.line("// Score modifier: softcap(score * scale), in log2 units.")
	if at.Softcap != 0 {
		w.line("%s float smod(float s) const { return %s * fz_att_tanh(s * %s); }", ctxMember,
			flit(at.Softcap*log2e), flit(at.Scale/at.Softcap))
	} else {
		w.line("%s float smod(float s) const { return s * %s; }", ctxMember, flit(at.Scale*log2e))
	}
	// The window: keys W or more positions before the query are masked when
	// W > 0.
	win, winConst, hasWin := ix{}, int64(0), false
	if !at.Window.IsZero() {
		win = dimIx(at.Window)
		if v, ok := at.Window.Value(); ok {
			winConst, hasWin = v, v > 0
		} else {
			hasWin = true
		}
	}
	wpos := func(cond string) string {
		if winConst > 0 {
			return cond
		}
		return fmt.Sprintf("(%s <= 0 || %s)", win, cond)
	}
	var vis []string
	if at.Causal {
		vis = append(vis, "delta >= 0")
	}
	if hasWin {
		vis = append(vis, wpos(fmt.Sprintf("delta < %s", win)))
	}
	if len(vis) == 0 {
		vis = []string{"true"}
	}
	w.line("// Whether the mask has a window (the wgmma prefill sizes its warpgroups'")
	w.line("// registers by it).")
	w.line("static constexpr bool WINDOW = %t;", hasWin)
	w.line("// Mask: whether a query sees a key delta positions before it (after it")
	w.line("// when negative); distances are clamped to +-2^30.")
	w.line("%s bool visible(int delta) const { return %s; }", ctxMember, strings.Join(vis, " && "))
	w.line("// The keys [lo, hi) queries at positions pmin..pmax can see among n.")
	w.open("%s void kbounds(i64 pmin, i64 pmax, i64 n, i64& lo, i64& hi) const {", ctxMember)
	w.line("lo = 0; hi = n;")
	if at.Causal {
		w.line("hi = fz_min64(hi, pmax + 1);")
	}
	if hasWin {
		if winConst > 0 {
			w.line("lo = fz_max64(lo, pmin - %s + 1);", win)
		} else {
			w.line("if (%s > 0) lo = fz_max64(lo, pmin - %s + 1);", win, win)
		}
	}
	w.line("if (hi < lo) hi = lo;")
	w.close()
	w.line("// Whether some query at pmin..pmax does not see some key of [k0, k1).")
	var tm []string
	if at.Causal {
		tm = append(tm, "k1 - 1 > pmin")
	}
	if hasWin {
		if winConst > 0 {
			tm = append(tm, fmt.Sprintf("k0 <= pmax - %s", win))
		} else {
			tm = append(tm, fmt.Sprintf("(%s > 0 && k0 <= pmax - %s)", win, win))
		}
	}
	if len(tm) == 0 {
		tm = []string{"false"}
	}
	w.line("%s bool tile_masked(i64 pmin, i64 pmax, i64 k0, i64 k1) const { return %s; }", ctxMember, strings.Join(tm, " || "))
}

// flashAttentionKernel generates an Attention kernel: the split-KV decode
// entry (merging its splits in the same launch), preceded by the prefix
// pass for a cascade whose prefix the batch shares, and the prefill entry.
// The plan's launch variant names the kernel's entry of that body (its
// name): with plan.VariantPrefill the prefill body, and the decode entries
// get a "_decode" suffix; otherwise the decode body (the prefix pass's
// entry "_prefix"), and "_prefill".
func (k *kgen) flashAttentionKernel() (*generated, error) {
	m, err := k.flashModel()
	if err != nil {
		return nil, err
	}
	l := k.pk.Launch
	// The decode ring's stages: the launch's when it is a decode launch,
	// else the ring the launch plan would give.
	stages, _ := plan.DecodeRing(m.dh, k.nt)
	chunk, nps := int64(0), int64(1)
	if l != nil && l.Variant == plan.VariantDecode {
		if stages = l.Stages; stages == 0 || plan.DecodeStages(m.dh, k.nt, l.SharedBytes) != stages {
			want, bytes := plan.DecodeRing(m.dh, k.nt)
			return nil, fmt.Errorf("attention kernel %s: the decode launch gives %d stages in %d bytes of dynamic shared memory, not a ring of whole stages (want %d: %d stages)", k.pk.Name, l.Stages, l.SharedBytes, bytes, want)
		}
		if l.SplitKeys%plan.DecodeTileKeys != 0 || l.SplitKeys > math.MaxInt32 {
			return nil, fmt.Errorf("attention kernel %s: split size %d is not a multiple of %d keys", k.pk.Name, l.SplitKeys, plan.DecodeTileKeys)
		}
		chunk = l.SplitKeys
		if l.PrefixSplits > math.MaxInt32 {
			return nil, fmt.Errorf("attention kernel %s: %d prefix splits", k.pk.Name, l.PrefixSplits)
		}
		nps = max(l.PrefixSplits, 1)
	}
	libs := []string{libTMA, libAttentionBulk, libAttentionFlash}
	m.prefixPass = m.hasPrefixPass(l)
	// Keys stored transposed take no map: the decode copies them by
	// cp.async (fz_att_decode's BULK).
	if m.dh%64 == 0 && !m.at.KeysT {
		own := m.srcs[len(m.srcs)-1]
		m.tmap = k.rowMap(codegen.RowMap{K: codegen.Buffer(own.k), V: codegen.Buffer(own.v), Dh: m.dh})
	}
	var helpers writer
	if err := m.emitContext(&helpers, chunk, nps); err != nil {
		return nil, err
	}
	ctx := "  " + k.ctxInit("c") + "\n"
	ws := "fz_workspace, (i64)(sizeof(fz_workspace) / sizeof(float))"
	// Every entry waits for the kernel before it itself: the decode after
	// asking L2 for its first rows, the others first.
	wait := "  fz_grid_sync();\n"
	dec := ctx + fmt.Sprintf("  fz_att_decode<%d, %d, %d, %d, %d, %t>(c, %s);\n", m.dh, m.dp, k.nt, stages, chunk, m.bf, ws)
	pre := ctx + wait + fmt.Sprintf("  fz_att_prefill<%d, %d, %d, %d, %d, %t>(c);\n", m.dh, m.dp, m.prefillBC(), k.nt, m.prefillWPR(), m.bf)
	if l != nil && l.Variant == plan.VariantPrefill && l.WGMMA {
		bc, stages, err := m.prefillWG(l)
		if err != nil {
			return nil, err
		}
		libs = append(libs, libGemvWGMMA, libAttentionWG)
		pre = ctx + wait + fmt.Sprintf("  fz_att_prefill_wg<%d, %d, %d, %t>(c);\n", m.dh, bc, stages, m.bf)
	}
	// The decode variant's entries, launched in order on the same grid: a
	// shared prefix's pass, then the decode kernel.
	decEntries := func(suffix string) []entry {
		return []entry{{suffix, dec}}
	}
	if m.prefixPass {
		libs = append(libs, libAttentionCascade)
		pass := ctx + wait + fmt.Sprintf("  fz_att_prefix<%d, %d, %d, %d, %t>(c, %s);\n", m.dh, m.dp, k.nt, stages, m.bf, ws)
		decEntries = func(suffix string) []entry {
			return []entry{{suffix + prefixSuffix, pass}, {suffix, dec}}
		}
	}
	suffixes := func(es []entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.suffix)
		}
		return out
	}
	gen := &generated{
		libs:     libs,
		helpers:  helpers.String(),
		entries:  append(decEntries(""), entry{"_prefill", pre}),
		variants: map[plan.Variant][]string{plan.VariantDecode: suffixes(decEntries("")), plan.VariantPrefill: {"_prefill"}},
		variant:  plan.VariantDecode,
		waits:    true,
	}
	if l != nil && l.Variant == plan.VariantPrefill {
		gen.entries = append([]entry{{"", pre}}, decEntries("_decode")...)
		gen.variants = map[plan.Variant][]string{plan.VariantPrefill: {""}, plan.VariantDecode: suffixes(decEntries("_decode"))}
		gen.variant = plan.VariantPrefill
		if l.WGMMA {
			// The entries share the launch's block size, and the decode
			// kernel does not fit the registers of the wgmma prefill's
			// 384 threads; nothing launches it from a prefill plan.
			gen.entries = gen.entries[:1]
			delete(gen.variants, plan.VariantDecode)
		}
	}
	return gen, nil
}
