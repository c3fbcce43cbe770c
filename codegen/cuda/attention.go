package cuda

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// Attention kernel tiles: rows of queries are processed attQP at a time
// against tiles of attBC keys staged in shared memory.
const (
	attQP = 8
	attBC = 32
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
	k       *kgen
	n       *ir.Node
	at      *ir.Attention
	q, out  *ir.Value
	dh      int64
	grp     int64
	h, g    ix
	sq, b   ix
	srcs    []attSource
	kvDType ir.DType
}

func (k *kgen) attModel() (*attModel, error) {
	n := k.pk.Nodes[0]
	if n.Op != ir.OpAttention || len(k.pk.Nodes) != 1 {
		return nil, fmt.Errorf("attention kernel %s: unexpected ops", k.pk.Name)
	}
	m := &attModel{k: k, n: n, at: n.Attr.Attn, q: n.Args[0], out: n.Outs[0]}
	qs := shapeOf(m.q)
	dh, ok := qs[3].value()
	if !ok {
		return nil, fmt.Errorf("attention kernel %s: the head dim must be a constant", k.pk.Name)
	}
	m.dh = dh
	m.b, m.h, m.sq = ixp(qs[0]), ixp(qs[1]), ixp(qs[2])
	ks := shapeOf(n.Args[len(n.Args)-2])
	m.g = ixp(ks[1])
	h, okh := qs[1].value()
	g, okg := ks[1].value()
	if !okh || !okg || g == 0 || h%g != 0 {
		return nil, fmt.Errorf("attention kernel %s: heads must be constants, kv heads dividing query heads", k.pk.Name)
	}
	m.grp = h / g
	for i := 1; i < len(n.Args); i += 2 {
		s := attSource{k: n.Args[i], v: n.Args[i+1], prefix: m.at.Cascade && i == 1}
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
	t := dimIx(s.k.Type.Shape[2])
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

// emitSetup writes the per-(b, g) key count tk and the source lengths.
func (m *attModel) emitSetup(w *writer) error {
	tk := ixc(0)
	for i, s := range m.srcs {
		n, err := m.srcLen(s, ixv("b"))
		if err != nil {
			return err
		}
		w.line("const i64 len%d = %s;", i, n)
		tk = ixAdd(tk, ixv(fmt.Sprintf("len%d", i)))
	}
	w.line("const i64 tk = %s;", tk)
	return nil
}

// emitKeyRows writes the element offsets of the K and V rows of keys
// jt..jt+attBC-1 into sRK, sRV (-1 past j1) and the pointers' buffers.
func (m *attModel) emitKeyRows(w *writer) error {
	k := m.k
	w.open("if (threadIdx.x < %d) {", attBC)
	w.line("const i64 j = jt + threadIdx.x;")
	w.line("i64 rk = -1, rv = -1; int src = 0;")
	w.open("if (j < j1) {")
	w.line("i64 t = j;")
	for i, s := range m.srcs {
		last := i == len(m.srcs)-1
		if !last {
			w.open("if (t < len%d) {", i)
		} else if i > 0 {
			w.open("{")
		} else {
			w.open("{")
		}
		bb := s.batchOf(ixv("b"))
		for c, v := range []*ir.Value{s.k, s.v} {
			vw, _ := k.viewOf(v)
			off, err := k.offset(vw, []ix{bb, ixv("g"), ixv("t"), ixc(0)}, nil)
			if err != nil {
				return err
			}
			name := "rk"
			if c == 1 {
				name = "rv"
			}
			w.line("%s = %s;", name, off)
		}
		w.line("src = %d;", i)
		w.close()
		if !last {
			w.line("else {")
			w.indent++
			w.line("t -= len%d;", i)
		}
	}
	for range m.srcs[:len(m.srcs)-1] {
		w.close()
	}
	w.close()
	w.line("sRK[threadIdx.x] = rk; sRV[threadIdx.x] = rv; sSrc[threadIdx.x] = src;")
	w.close()
	return nil
}

// srcPtr is the C expression of source i's K (c = 0) or V buffer.
func (m *attModel) srcPtr(i, c int) (string, error) {
	v := m.srcs[i].k
	if c == 1 {
		v = m.srcs[i].v
	}
	vw, err := m.k.viewOf(v)
	if err != nil {
		return "", err
	}
	return m.k.name(vw.buf)
}

// emitTileLoad copies the K and V rows of the tile into sK, sV.
func (m *attModel) emitTileLoad(w *writer) error {
	dh := m.dh
	ct := ctype(m.kvDType)
	pick := func(c int) (string, error) {
		var parts []string
		for i := len(m.srcs) - 1; i >= 0; i-- {
			p, err := m.srcPtr(i, c)
			if err != nil {
				return "", err
			}
			if i == len(m.srcs)-1 {
				parts = append(parts, p)
			} else {
				parts = append(parts, fmt.Sprintf("src == %d ? %s : ", i, p))
			}
		}
		// parts are built last first: reverse into a conditional chain.
		s := parts[0]
		for _, p := range parts[1:] {
			s = p + s
		}
		return "(" + s + ")", nil
	}
	kp, err := pick(0)
	if err != nil {
		return err
	}
	vp, err := pick(1)
	if err != nil {
		return err
	}
	if dh%8 == 0 {
		w.open("for (int e = threadIdx.x; e < %d; e += blockDim.x) {", attBC*dh/8)
		w.line("const int c = e / %d, d = (e %% %d) * 8;", dh/8, dh/8)
		w.line("const i64 rk = sRK[c], rv = sRV[c]; const int src = sSrc[c];")
		w.open("if (rk >= 0) {")
		w.line("const %s* kp = %s + rk + d; const %s* vp = %s + rv + d;", ct, kp, ct, vp)
		w.line("float x[8];")
		w.line("if (fz_aligned(kp, %d)) fz_ld8_%s(x, kp); else for (int i = 0; i < 8; i++) x[i] = fz_ld_%s(kp + i);", vecAlign(m.kvDType), dsuf(m.kvDType), dsuf(m.kvDType))
		w.line("fz_st8_f32(sK + c * KS + d, x);")
		w.line("if (fz_aligned(vp, %d)) fz_ld8_%s(x, vp); else for (int i = 0; i < 8; i++) x[i] = fz_ld_%s(vp + i);", vecAlign(m.kvDType), dsuf(m.kvDType), dsuf(m.kvDType))
		w.line("fz_st8_f32(sV + c * KS + d, x);")
		w.close("} else {")
		w.indent++
		w.line("const float z[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};")
		w.line("fz_st8_f32(sK + c * KS + d, z); fz_st8_f32(sV + c * KS + d, z);")
		w.close()
		w.close()
		return nil
	}
	w.open("for (int e = threadIdx.x; e < %d; e += blockDim.x) {", attBC*dh)
	w.line("const int c = e / %d, d = e %% %d;", dh, dh)
	w.line("const i64 rk = sRK[c], rv = sRV[c]; const int src = sSrc[c];")
	w.line("sK[c * KS + d] = rk >= 0 ? fz_ld_%s(%s + rk + d) : 0.f;", dsuf(m.kvDType), kp)
	w.line("sV[c * KS + d] = rv >= 0 ? fz_ld_%s(%s + rv + d) : 0.f;", dsuf(m.kvDType), vp)
	w.close()
	return nil
}

// emitRows writes the processing of query rows [0, nrows) (row r is query
// qi(r) of head qh(r), C expressions of r) against keys [j0, j1) of kv
// head g of sequence b: attQP rows at a time, key tiles of attBC, online
// softmax, then the rows' results: normalised into the output when split
// is the C condition "nsplit == 1", else (m, l, o) partials.
func (m *attModel) emitRows(w *writer, nrows, qh, qi string, partial bool) error {
	k := m.k
	dh := m.dh
	ept := (attQP*dh + int64(k.nt) - 1) / int64(k.nt)
	at := m.at
	w.open("for (i64 r0 = 0; r0 < %s; r0 += %d) {", nrows, attQP)
	w.line("const int nr = (int)fz_min64(%d, %s - r0);", attQP, nrows)
	w.line("__syncthreads();")
	// Queries, pre-scaled.
	w.open("for (int e = threadIdx.x; e < %d; e += blockDim.x) {", attQP*dh)
	w.line("const int r = e / %d, d = e %% %d;", dh, dh)
	w.line("float x = 0.f;")
	w.open("if (r < nr) {")
	w.line("const i64 rr = r0 + r;")
	w.line("const i64 h = %s, qi = %s;", qh, qi)
	qa, err := k.addr(m.q, []ix{ixv("b"), ixv("h"), ixv("qi"), ixv("d")})
	if err != nil {
		return err
	}
	w.line("x = fz_ld_%s(%s) * %s;", dsuf(m.q.Type.DType), qa, flit(at.Scale))
	w.close()
	w.line("sQ[e] = x;")
	w.close()
	w.line("if (threadIdx.x < %d) { sM[threadIdx.x] = -FZ_INF; sL[threadIdx.x] = 0.f; }", attQP)
	w.line("float o[%d];", ept)
	w.line("#pragma unroll")
	w.line("for (int i = 0; i < %d; i++) o[i] = 0.f;", ept)
	// Causal / window key bounds of this chunk of rows.
	w.line("i64 jlo = j0, jhi = j1;")
	if at.Causal {
		w.open("{")
		w.line("i64 maxpos = -1, minpos = tk;")
		w.open("for (int r = 0; r < nr; r++) {")
		w.line("const i64 rr = r0 + r;")
		w.line("const i64 qi = %s;", qi)
		w.line("const i64 pos = tk - %s + qi;", m.sq)
		w.line("maxpos = pos > maxpos ? pos : maxpos; minpos = pos < minpos ? pos : minpos;")
		w.close()
		w.line("jhi = fz_min64(jhi, maxpos + 1);")
		if !at.Window.IsZero() {
			w.line("jlo = fz_max64(jlo, minpos - %s + 1);", dimIx(at.Window))
		}
		w.close()
	}
	w.open("for (i64 jt = jlo; jt < jhi; jt += %d) {", attBC)
	w.line("__syncthreads();")
	w.line("{ const i64 j1 = jhi;")
	w.indent++
	if err := m.emitKeyRows(w); err != nil {
		return err
	}
	w.indent--
	w.line("}")
	w.line("__syncthreads();")
	if err := m.emitTileLoad(w); err != nil {
		return err
	}
	w.line("__syncthreads();")
	// Scores.
	w.open("for (int e = threadIdx.x; e < %d; e += blockDim.x) {", attQP*attBC)
	w.line("const int r = e / %d, c = e %% %d;", attBC, attBC)
	w.line("const i64 j = jt + c;")
	w.line("float s = -FZ_INF;")
	w.open("if (r < nr && j < jhi) {")
	w.line("float acc = 0.f;")
	if dh%4 == 0 {
		w.line("#pragma unroll 8")
		w.open("for (int d = 0; d < %d; d += 4) {", dh)
		w.line("const float4 a = *(const float4*)(sQ + r * %d + d), kk = *(const float4*)(sK + c * KS + d);", dh)
		w.line("acc = fmaf(a.x, kk.x, acc); acc = fmaf(a.y, kk.y, acc); acc = fmaf(a.z, kk.z, acc); acc = fmaf(a.w, kk.w, acc);")
		w.close()
	} else {
		w.line("for (int d = 0; d < %d; d++) acc = fmaf(sQ[r * %d + d], sK[c * KS + d], acc);", dh, dh)
	}
	w.line("s = acc;")
	if at.Softcap != 0 {
		w.line("s = fz_softcap(s, %s);", flit(at.Softcap))
	}
	if at.Causal {
		w.line("const i64 rr = r0 + r;")
		w.line("const i64 qi = %s;", qi)
		w.line("const i64 pos = tk - %s + qi;", m.sq)
		cond := "j > pos"
		if !at.Window.IsZero() {
			cond += fmt.Sprintf(" || j <= pos - %s", dimIx(at.Window))
		}
		w.line("if (%s) s = -FZ_INF;", cond)
	}
	w.close()
	w.line("sS[e] = s;")
	w.close()
	w.line("__syncthreads();")
	// Online softmax: a warp per row, a lane per key.
	w.open("for (int r = threadIdx.x >> 5; r < %d; r += blockDim.x >> 5) {", attQP)
	w.line("const int lane = threadIdx.x & 31;")
	w.line("const float s = sS[r * %d + lane];", attBC)
	w.line("const float mold = sM[r];")
	w.line("const float mnew = fmaxf(mold, fz_warp_max(s));")
	w.line("const float p = s == -FZ_INF ? 0.f : fz_exp(s - mnew);")
	w.line("const float sum = fz_warp_sum(p);")
	w.line("sS[r * %d + lane] = p;", attBC)
	w.open("if (lane == 0) {")
	w.line("const float alpha = mold == -FZ_INF ? 0.f : fz_exp(mold - mnew);")
	w.line("sA[r] = alpha; sL[r] = sL[r] * alpha + sum; sM[r] = mnew;")
	w.close()
	w.close()
	w.line("__syncthreads();")
	// P·V.
	w.line("#pragma unroll")
	w.open("for (int i = 0; i < %d; i++) {", ept)
	w.line("const int e = threadIdx.x + i * %d;", k.nt)
	w.line("const int r = e / %d, d = e %% %d;", dh, dh)
	w.line("if (r >= %d) continue;", attQP)
	w.line("float acc = o[i] * sA[r];")
	w.line("#pragma unroll 8")
	w.line("for (int c = 0; c < %d; c++) acc = fmaf(sS[r * %d + c], sV[c * KS + d], acc);", attBC, attBC)
	w.line("o[i] = acc;")
	w.close()
	w.close()
	w.line("__syncthreads();")
	// Results.
	w.line("#pragma unroll")
	w.open("for (int i = 0; i < %d; i++) {", ept)
	w.line("const int e = threadIdx.x + i * %d;", k.nt)
	w.line("const int r = e / %d, d = e %% %d;", dh, dh)
	w.line("if (r >= nr) continue;")
	w.line("const i64 rr = r0 + r;")
	w.line("const i64 h = %s, qi = %s;", qh, qi)
	oa, err := k.addr(m.out, []ix{ixv("b"), ixv("h"), ixv("qi"), ixv("d")})
	if err != nil {
		return err
	}
	store := fmt.Sprintf("fz_st_%s(%s, sL[r] > 0.f ? o[i] / sL[r] : 0.f);", dsuf(m.out.Type.DType), oa)
	if partial {
		w.open("if (nsplit == 1) {")
		w.line("%s", store)
		w.close("} else {")
		w.indent++
		w.line("float* pp = fz_workspace + ((i64)sp * %s + ((b * %s + h) * %s + qi)) * %d;", m.rowsTotal(), m.h, m.sq, dh+2)
		w.line("pp[2 + d] = o[i];")
		w.line("if (d == 0) { pp[0] = sM[r]; pp[1] = sL[r]; }")
		w.close()
	} else {
		w.line("%s", store)
	}
	w.close()
	w.close()
	return nil
}

// rowsTotal is the number of query rows of the node: B*H*Sq.
func (m *attModel) rowsTotal() ix { return ixMul(ixMul(m.b, m.h), m.sq) }

// smem declares the shared memory of the row processing.
func (m *attModel) smem(w *writer) {
	w.line("constexpr int KS = %d;", m.dh+4)
	w.line("__shared__ __align__(16) float sQ[%d];", attQP*m.dh)
	w.line("__shared__ __align__(16) float sK[%d];", attBC*(m.dh+4))
	w.line("__shared__ __align__(16) float sV[%d];", attBC*(m.dh+4))
	w.line("__shared__ float sS[%d];", attQP*attBC)
	w.line("__shared__ float sM[%d], sL[%d], sA[%d];", attQP, attQP, attQP)
	w.line("__shared__ i64 sRK[%d], sRV[%d];", attBC, attBC)
	w.line("__shared__ int sSrc[%d];", attBC)
}

// decodeBody is the split-KV decode entry: block (split, kv head g,
// sequence b) streams its chunk of the keys for the H/G query heads of the
// group and every query (GQA packing), writing the output directly
// without splits, (m, l, o) partials with them.
func (m *attModel) decodeBody() (string, error) {
	var w writer
	w.indent = 1
	m.smem(&w)
	w.line("const int nsplit = gridDim.x, sp = blockIdx.x;")
	w.open("for (i64 b = blockIdx.z; b < %s; b += gridDim.z) {", m.b)
	w.open("for (i64 g = blockIdx.y; g < %s; g += gridDim.y) {", m.g)
	if err := m.emitSetup(&w); err != nil {
		return "", err
	}
	w.line("const i64 chunk = ((tk + nsplit - 1) / nsplit + %d) / %d * %d;", attBC-1, attBC, attBC)
	w.line("const i64 j0 = fz_min64(tk, sp * chunk), j1 = fz_min64(tk, j0 + chunk);")
	nrows := ixMul(ixc(m.grp), m.sq).String()
	qh := fmt.Sprintf("g * %d + rr / %s", m.grp, m.sq)
	qi := fmt.Sprintf("rr %% %s", m.sq)
	if err := m.emitRows(&w, nrows, qh, strings.ReplaceAll(qi, "%%", "%"), true); err != nil {
		return "", err
	}
	w.close()
	w.close()
	return w.String(), nil
}

// mergeBody combines the splits' partials with their log-sum-exp: each
// block (kv head g, sequence b) of the first split column merges the rows
// of its group.
func (m *attModel) mergeBody() (string, error) {
	var w writer
	w.indent = 1
	w.line("const int nsplit = gridDim.x;")
	w.line("if (nsplit <= 1 || blockIdx.x != 0) return;")
	w.open("for (i64 b = blockIdx.z; b < %s; b += gridDim.z) {", m.b)
	w.open("for (i64 g = blockIdx.y; g < %s; g += gridDim.y) {", m.g)
	w.line("const i64 nrows = %s;", ixMul(ixc(m.grp), m.sq))
	w.open("for (i64 e = threadIdx.x; e < nrows * %d; e += blockDim.x) {", m.dh)
	w.line("const i64 rr = e / %d; const int d = (int)(e %% %d);", m.dh, m.dh)
	w.line("const i64 h = g * %d + rr / %s, qi = rr %% %s;", m.grp, m.sq, m.sq)
	w.line("const i64 row = (b * %s + h) * %s + qi;", m.h, m.sq)
	w.line("float mx = -FZ_INF;")
	w.line("for (int s = 0; s < nsplit; s++) mx = fmaxf(mx, fz_workspace[((i64)s * %s + row) * %d]);", m.rowsTotal(), m.dh+2)
	w.line("float l = 0.f, acc = 0.f;")
	w.open("if (mx != -FZ_INF) {")
	w.open("for (int s = 0; s < nsplit; s++) {")
	w.line("const float* pp = fz_workspace + ((i64)s * %s + row) * %d;", m.rowsTotal(), m.dh+2)
	w.line("if (pp[0] == -FZ_INF) continue;")
	w.line("const float f = fz_exp(pp[0] - mx);")
	w.line("l += pp[1] * f; acc += pp[2 + d] * f;")
	w.close()
	w.close()
	oa, err := m.k.addr(m.out, []ix{ixv("b"), ixv("h"), ixv("qi"), ixv("d")})
	if err != nil {
		return "", err
	}
	w.line("fz_st_%s(%s, l > 0.f ? acc / l : 0.f);", dsuf(m.out.Type.DType), oa)
	w.close()
	w.close()
	w.close()
	return w.String(), nil
}

// prefillBody is the tiled prefill entry: block (query block of 128,
// head h, sequence b) processes its queries attQP at a time against key
// tiles, skipping the tiles the causal mask (and window) hide.
func (m *attModel) prefillBody() (string, error) {
	var w writer
	w.indent = 1
	m.smem(&w)
	w.line("const int nsplit = 1, sp = 0;")
	w.line("const i64 nqb = (%s + 127) / 128;", m.sq)
	w.open("for (i64 b = blockIdx.z; b < %s; b += gridDim.z) {", m.b)
	w.open("for (i64 h0 = blockIdx.y; h0 < %s; h0 += gridDim.y) {", m.h)
	w.line("const i64 g = h0 / %d;", m.grp)
	if err := m.emitSetup(&w); err != nil {
		return "", err
	}
	w.line("const i64 j0 = 0, j1 = tk;")
	w.open("for (i64 qb = blockIdx.x; qb < nqb; qb += gridDim.x) {")
	w.line("const i64 q0 = qb * 128;")
	nrows := fmt.Sprintf("fz_min64(128, %s - q0)", m.sq)
	if err := m.emitRows(&w, nrows, "h0", "q0 + rr", false); err != nil {
		return "", err
	}
	w.close()
	w.close()
	w.close()
	return w.String(), nil
}

// attentionKernel generates an Attention kernel: a split-KV decode entry
// and its merge, and a tiled prefill entry; the launch variant picks.
func (k *kgen) attentionKernel() (*generated, error) {
	m, err := k.attModel()
	if err != nil {
		return nil, err
	}
	dec, err := m.decodeBody()
	if err != nil {
		return nil, err
	}
	mer, err := m.mergeBody()
	if err != nil {
		return nil, err
	}
	pre, err := m.prefillBody()
	if err != nil {
		return nil, err
	}
	gen := &generated{
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
