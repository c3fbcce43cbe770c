package cuda

import (
	"fmt"
	"math"
	"strings"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// scope is a place element code is emitted: statements and the values
// already computed there.
type scope struct {
	w    *writer
	memo map[string]string
	// parent scopes' values are visible here.
	parent *scope
}

func newScope(w *writer, parent *scope) *scope {
	return &scope{w: w, memo: map[string]string{}, parent: parent}
}

func (s *scope) lookup(key string) (string, bool) {
	for c := s; c != nil; c = c.parent {
		if v, ok := c.memo[key]; ok {
			return v, true
		}
	}
	return "", false
}

// evaluator emits the f32 value of graph values at symbolic indices: the
// element-wise op tree of a kernel, generated from its nodes. Values the
// kernel does not compute are loaded through their views; a kernel hooks
// special values (reduction results, matmul tiles, preloaded vectors) with
// leaf.
type evaluator struct {
	k *kgen
	// leaf returns the C expression of v at idx when the kernel provides it.
	leaf func(e *evaluator, v *ir.Value, idx []ix) (string, bool, error)
	// scopeOf picks where the code of v at idx goes (hoisting row-invariant
	// values); nil means the current scope.
	scopeOf func(v *ir.Value, idx []ix) *scope
	cur     *scope
	// branch counts the concat parts the code being emitted is inside: a
	// part's indices are out of range where another part is taken, so its
	// loads must stay behind the part's condition (no vector loads ahead of
	// the lanes).
	branch int
}

func idxKey(v *ir.Value, idx []ix) string {
	parts := make([]string, len(idx))
	for i, x := range idx {
		parts[i] = x.s
	}
	return fmt.Sprintf("%d[%s]", v.ID, strings.Join(parts, ","))
}

// eval returns a C expression (usually a variable) holding v at idx.
func (e *evaluator) eval(v *ir.Value, idx []ix) (string, error) {
	if len(idx) != len(v.Type.Shape) {
		return "", fmt.Errorf("internal: %s indexed with %d indices", v.Ref(), len(idx))
	}
	key := idxKey(v, idx)
	sc := e.cur
	if e.scopeOf != nil {
		if s := e.scopeOf(v, idx); s != nil {
			sc = s
		}
	}
	if x, ok := sc.lookup(key); ok {
		return x, nil
	}
	if e.leaf != nil {
		x, ok, err := e.leaf(e, v, idx)
		if err != nil || ok {
			return x, err
		}
	}
	d := v.Def
	if d.Op == ir.OpConst {
		return flit(d.Attr.Num), nil
	}
	saved := e.cur
	e.cur = sc
	defer func() { e.cur = saved }()
	var expr string
	var err error
	switch {
	case !e.k.inKernel[v] && !e.viewOfKernelValue(v):
		expr, err = e.k.load(v, idx)
	case plan.IsView(d.Op):
		var aidx []ix
		aidx, err = viewArgIndex(d, v, idx)
		if err == nil {
			return e.eval(d.Args[0], aidx)
		}
	default:
		expr, err = e.op(d, v, idx)
	}
	if err != nil {
		return "", err
	}
	t := e.k.fresh("t")
	sc.w.line("const float %s = %s;", t, expr)
	sc.memo[key] = t
	return t, nil
}

// viewOfKernelValue reports whether v is a view of a value the kernel
// computes.
func (e *evaluator) viewOfKernelValue(v *ir.Value) bool {
	for v.Def != nil && plan.IsView(v.Def.Op) && !v.Def.Op.IsLeaf() && v.Def.Op != ir.OpConst && v.Def.Op != ir.OpSeqLens {
		v = v.Def.Args[0]
		if e.k.inKernel[v] {
			return true
		}
	}
	return false
}

// viewArgIndex maps an index of view value v (defined by d) to an index of
// d's input.
func viewArgIndex(d *ir.Node, v *ir.Value, idx []ix) ([]ix, error) {
	a := d.Args[0]
	switch d.Op {
	case ir.OpTranspose:
		out := make([]ix, len(idx))
		for i, p := range d.Attr.Perm {
			out[p] = idx[i]
		}
		return out, nil
	case ir.OpSplit, ir.OpSlice:
		start := partStart(d, v)
		out := append([]ix(nil), idx...)
		out[d.Attr.Axis] = ixAdd(out[d.Attr.Axis], ixp(start))
		return out, nil
	case ir.OpReshape:
		return reshapeIndex(idx, shapeOf(a), shapeOf(v))
	}
	return nil, fmt.Errorf("cannot index through %s", d.Op)
}

// bcastIndex maps an output index to the index of a broadcast operand.
func bcastIndex(a *ir.Value, out []poly, idx []ix) []ix {
	as := shapeOf(a)
	shift := len(out) - len(as)
	res := make([]ix, len(as))
	for i := range as {
		if as[i].isConst(1) && !out[i+shift].isConst(1) {
			res[i] = ixc(0)
		} else {
			res[i] = idx[i+shift]
		}
	}
	return res
}

// op emits the element function of an element-wise node.
func (e *evaluator) op(d *ir.Node, v *ir.Value, idx []ix) (string, error) {
	out := shapeOf(v)
	arg := func(i int) (string, error) { return e.eval(d.Args[i], bcastIndex(d.Args[i], out, idx)) }
	switch d.Op {
	case ir.OpNeg, ir.OpExp, ir.OpLog, ir.OpSqrt, ir.OpRsqrt, ir.OpTanh, ir.OpSilu, ir.OpGelu, ir.OpSigmoid, ir.OpSoftcap, ir.OpCast:
		a, err := arg(0)
		if err != nil {
			return "", err
		}
		return unaryC(d, a), nil
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMax, ir.OpMin:
		a, err := arg(0)
		if err != nil {
			return "", err
		}
		b, err := arg(1)
		if err != nil {
			return "", err
		}
		return binaryC(d.Op, a, b), nil
	case ir.OpCausal, ir.OpWindow:
		return e.mask(d, v, idx)
	case ir.OpRope:
		return e.rope(d, idx)
	case ir.OpGather:
		return e.gather(d, idx)
	case ir.OpConcat:
		return e.concat(d, v, idx)
	}
	return "", fmt.Errorf("op %s is not element-wise", d.Op)
}

// unaryFns are the C functions of the unary element-wise ops.
var unaryFns = map[ir.Op]string{
	ir.OpExp: "fz_exp", ir.OpLog: "logf", ir.OpSqrt: "sqrtf", ir.OpRsqrt: "rsqrtf", ir.OpTanh: "tanhf",
	ir.OpSilu: "fz_silu", ir.OpGelu: "fz_gelu", ir.OpSigmoid: "fz_sigmoid",
}

// castFns round an f32 to the values of a narrower type.
var castFns = map[ir.DType]string{
	ir.I32: "fz_trunc_i32", ir.BF16: "fz_round_bf16", ir.F16: "fz_round_f16", ir.FP8E4M3: "fz_round_fp8",
}

func unaryC(d *ir.Node, a string) string {
	switch d.Op {
	case ir.OpNeg:
		return "-" + a
	case ir.OpSoftcap:
		return "fz_softcap(" + a + ", " + flit(d.Attr.Num) + ")"
	case ir.OpCast:
		if fn, ok := castFns[d.Attr.To]; ok {
			return fn + "(" + a + ")"
		}
		return a
	}
	if fn, ok := unaryFns[d.Op]; ok {
		return fn + "(" + a + ")"
	}
	return a
}

// binaryFormats are the C expressions of the binary element-wise ops.
var binaryFormats = map[ir.Op]string{
	ir.OpAdd: "%s + %s", ir.OpSub: "%s - %s", ir.OpMul: "%s * %s", ir.OpDiv: "%s / %s",
	ir.OpMax: "fmaxf(%s, %s)", ir.OpMin: "fminf(%s, %s)",
}

func binaryC(op ir.Op, a, b string) string {
	if f, ok := binaryFormats[op]; ok {
		return fmt.Sprintf(f, a, b)
	}
	return a
}

// mask emits causal / window: query i of Sq sits at key position
// Tk_eff - Sq + i (Tk_eff the sequence's key count); keys after it, and for
// a window keys W or more before it, become -inf. A packed query n counts
// within its own sequence b: it sits at Tk_eff - (indptr[b+1] - n).
func (e *evaluator) mask(d *ir.Node, v *ir.Value, idx []ix) (string, error) {
	a, err := e.eval(d.Args[0], idx)
	if err != nil {
		return "", err
	}
	r := len(idx)
	s := v.Type.Shape
	tk := dimIx(s[r-1])
	if rg := d.Args[0].Ragged; rg != nil && rg.Axis == r-1 {
		if tk, err = e.k.validLen(d.Args[0], idx); err != nil {
			return "", err
		}
	}
	q := ixAdd(ixSub(tk, dimIx(s[r-2])), idx[r-2])
	if p := d.Args[0].Packed; p != nil && p.Axis == r-2 {
		rest, err := e.k.packedRest(p, idx[r-2])
		if err != nil {
			return "", err
		}
		q = ixSub(tk, rest)
	}
	cond := fmt.Sprintf("%s > %s", idx[r-1], q)
	if d.Op == ir.OpWindow {
		cond += fmt.Sprintf(" || %s <= %s - %s", idx[r-1], q, dimIx(d.Attr.W))
	}
	return fmt.Sprintf("(%s) ? -FZ_INF : %s", cond, a), nil
}

// rope emits the rotate-half rotary embedding of x [B, S, H, Dh] at
// positions pos [B, S], or of packed tokens x [N, H, Dh] at pos [N].
func (e *evaluator) rope(d *ir.Node, idx []ix) (string, error) {
	x, pos := d.Args[0], d.Args[1]
	last := len(idx) - 1
	dh, ok := polyOf(x.Type.Shape[last]).value()
	if !ok {
		return "", fmt.Errorf("rope needs a constant head dim")
	}
	half := dh / 2
	dd := idx[last]
	a, err := e.eval(x, idx)
	if err != nil {
		return "", err
	}
	pidx := append([]ix(nil), idx...)
	pidx[last] = ixMod(ixAdd(dd, ixc(half)), ixc(dh))
	b, err := e.eval(x, pidx)
	if err != nil {
		return "", err
	}
	p, err := e.eval(pos, idx[:len(pos.Type.Shape)])
	if err != nil {
		return "", err
	}
	c, s := e.k.fresh("rc"), e.k.fresh("rs")
	e.cur.w.line("float %s, %s;", c, s)
	tab := e.k.ropeTable(ropeTheta(d), dh)
	e.cur.w.line("fz_rope_cs(%s, %s[%s], &%s, &%s);", p, tab, ixMod(dd, ixc(half)), c, s)
	if dd.k {
		if dd.n < half {
			return fmt.Sprintf("%s * %s - %s * %s", a, c, b, s), nil
		}
		return fmt.Sprintf("%s * %s + %s * %s", a, c, b, s), nil
	}
	return fmt.Sprintf("%s * %s + (%s < %d ? -%s : %s) * %s", a, c, dd, half, b, b, s), nil
}

func ropeTheta(d *ir.Node) float64 {
	if d.Attr.Num == 0 {
		return 10000
	}
	return d.Attr.Num
}

// gather reads row ids[...] of table [V, D].
func (e *evaluator) gather(d *ir.Node, idx []ix) (string, error) {
	table, ids := d.Args[0], d.Args[1]
	id, err := e.eval(ids, idx[:len(idx)-1])
	if err != nil {
		return "", err
	}
	if e.k.inKernel[table] {
		return "", fmt.Errorf("gather from a table computed in the same kernel")
	}
	return e.k.load(table, []ix{ixv("(i64)" + id), idx[len(idx)-1]})
}

// concat picks the part holding the position along the concat axis; only
// that part is read. Other axes of size 1 in a part broadcast.
func (e *evaluator) concat(d *ir.Node, v *ir.Value, idx []ix) (string, error) {
	ax := d.Attr.Axis
	out := shapeOf(v)
	t := e.k.fresh("t")
	e.cur.w.line("float %s;", t)
	start := poly{}
	for i, p := range d.Args {
		ps := shapeOf(p)
		pidx := make([]ix, len(idx))
		for a := range idx {
			switch {
			case a == ax:
				pidx[a] = ixSub(idx[a], ixp(start))
			case ps[a].isConst(1) && !out[a].isConst(1):
				pidx[a] = ixc(0)
			default:
				pidx[a] = idx[a]
			}
		}
		end := start.add(ps[ax])
		switch {
		case i == len(d.Args)-1:
			if i > 0 {
				e.cur.w.open("else {")
			} else {
				e.cur.w.open("{")
			}
		case i == 0:
			e.cur.w.open("if (%s < %s) {", idx[ax], ixp(end))
		default:
			e.cur.w.open("else if (%s < %s) {", idx[ax], ixp(end))
		}
		saved := e.cur
		e.cur = newScope(saved.w, saved)
		e.branch++
		x, err := e.eval(p, pidx)
		e.branch--
		e.cur = saved
		if err != nil {
			return "", err
		}
		e.cur.w.line("%s = %s;", t, x)
		e.cur.w.close()
		start = end
	}
	return t, nil
}

// ropeTable returns the name of the module's table of inverse frequencies
// theta^(-2i/dh), i < dh/2, in double.
func (k *kgen) ropeTable(theta float64, dh int64) string {
	name := fmt.Sprintf("fz_rope_%x_%d", math.Float64bits(theta), dh)
	if k.tables == nil {
		k.tables = map[string]string{}
	}
	if _, ok := k.tables[name]; !ok {
		var b strings.Builder
		fmt.Fprintf(&b, "static __device__ const double %s[%d] = {", name, dh/2)
		for i := int64(0); i < dh/2; i++ {
			if i%4 == 0 {
				b.WriteString("\n  ")
			}
			b.WriteString(dlit(math.Pow(theta, -2*float64(i)/float64(dh))))
			b.WriteString(", ")
		}
		b.WriteString("\n};\n")
		k.tables[name] = b.String()
	}
	return name
}
