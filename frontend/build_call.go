package frontend

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/parser"
)

// builtin is a built-in function of the spec language.
type builtin struct {
	// multi is set for functions that return several values (split, append).
	multi bool
	// args is the number of positional arguments; variadic allows more.
	args     int
	variadic bool
	// optional is how many trailing positional arguments may be left out.
	optional int
	// kw lists the keyword arguments accepted.
	kw    []string
	build func(b *builder, c *call) ([]operand, bool)
}

// call is a built-in call being built: its positional and keyword arguments.
type call struct {
	*parser.Call
	pos []*parser.Arg
	kw  map[string]*parser.Arg
}

var builtins map[string]*builtin

func init() {
	builtins = map[string]*builtin{
		"max":       {args: 2, optional: 1, kw: []string{"axis"}, build: buildMaxMin(ir.OpMax, ir.OpReduceMax)},
		"min":       {args: 2, optional: 1, kw: []string{"axis"}, build: buildMaxMin(ir.OpMin, -1)},
		"sum":       {args: 1, kw: []string{"axis"}, build: buildReduce(ir.OpSum)},
		"mean":      {args: 1, kw: []string{"axis"}, build: buildReduce(ir.OpMean)},
		"softmax":   {args: 1, kw: []string{"axis"}, build: buildReduce(ir.OpSoftmax)},
		"cast":      {args: 2, build: buildCast},
		"causal":    {args: 1, build: buildCausal},
		"window":    {args: 2, build: buildWindow},
		"topk":      {args: 2, build: buildTopK},
		"softcap":   {args: 2, build: buildSoftcap},
		"rope":      {args: 2, kw: []string{"theta"}, build: buildRope},
		"gather":    {args: 2, build: buildGather},
		"reshape":   {args: 2, build: buildReshape},
		"transpose": {args: 2, optional: 1, build: buildTranspose},
		"split":     {args: 2, multi: true, kw: []string{"axis"}, build: buildSplit},
		"concat":    {args: 2, variadic: true, kw: []string{"axis"}, build: buildConcat},
		"slice":     {args: 3, kw: []string{"axis"}, build: buildSlice},
		"append":    {args: 3, multi: true, build: buildAppend},
	}
	for name, op := range map[string]ir.Op{"exp": ir.OpExp, "log": ir.OpLog, "sqrt": ir.OpSqrt, "rsqrt": ir.OpRsqrt, "tanh": ir.OpTanh, "silu": ir.OpSilu, "gelu": ir.OpGelu, "sigmoid": ir.OpSigmoid} {
		builtins[name] = &builtin{args: 1, build: buildUnary(name, op)}
	}
}

// call evaluates a call of a built-in or user function.
func (b *builder) call(c *parser.Call) ([]operand, bool) {
	if fn, ok := b.fns[c.Name]; ok {
		return b.callFn(fn, c)
	}
	bi, ok := builtins[c.Name]
	if !ok {
		b.errorf(c.Pos, b.suggest(c.Name), "unknown function %s", c.Name)
		return nil, false
	}
	cl := &call{Call: c, kw: map[string]*parser.Arg{}}
	for _, a := range c.Args {
		if a.Name == "" {
			if len(cl.kw) > 0 {
				b.errorf(a.Pos, "", "positional argument after a keyword argument")
				return nil, false
			}
			cl.pos = append(cl.pos, a)
			continue
		}
		if !contains(bi.kw, a.Name) {
			hint := fmt.Sprintf("%s takes no keyword arguments", c.Name)
			if len(bi.kw) > 0 {
				hint = fmt.Sprintf("%s accepts %s", c.Name, strings.Join(bi.kw, ", "))
			}
			b.errorf(a.Pos, hint, "unknown keyword argument %s of %s", a.Name, c.Name)
			return nil, false
		}
		if cl.kw[a.Name] != nil {
			b.errorf(a.Pos, "", "keyword argument %s given twice", a.Name)
			return nil, false
		}
		cl.kw[a.Name] = a
	}
	n := len(cl.pos)
	if n > bi.args && !bi.variadic || n < bi.args-bi.optional {
		want := fmt.Sprint(bi.args)
		switch {
		case bi.variadic:
			want = fmt.Sprintf("at least %d", bi.args)
		case bi.optional > 0:
			want = fmt.Sprintf("%d to %d", bi.args-bi.optional, bi.args)
		}
		b.errorf(c.Pos, "", "%s takes %s positional arguments, got %d", c.Name, want, n)
		return nil, false
	}
	return bi.build(b, cl)
}

// callFn inlines a user function.
func (b *builder) callFn(fn *parser.FnDecl, c *parser.Call) ([]operand, bool) {
	for _, fr := range b.frames {
		if fr.fn == fn {
			b.errorf(c.Pos, "functions are inlined, so they cannot call themselves", "recursive call of fn %s", fn.Name)
			return nil, false
		}
	}
	if len(c.Args) != len(fn.Params) {
		b.errorf(c.Pos, fmt.Sprintf("fn %s is declared at line %d", fn.Name, fn.Pos.Line), "fn %s takes %d arguments, got %d", fn.Name, len(fn.Params), len(c.Args))
		return nil, false
	}
	params := map[string]operand{}
	ok := true
	for i, a := range c.Args {
		if a.Name != "" {
			b.errorf(a.Pos, "", "fn %s takes positional arguments only", fn.Name)
			ok = false
			continue
		}
		op, aok := b.expr(a.Value)
		ok = ok && aok
		params[fn.Params[i].Name] = op
	}
	if !ok {
		return nil, false
	}
	b.frames = append(b.frames, &frame{fn: fn, params: params})
	defer func() { b.frames = b.frames[:len(b.frames)-1] }()
	op, ok := b.expr(fn.Body)
	return []operand{op}, ok
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// tensorArg evaluates an argument that must be a tensor.
func (b *builder) tensorArg(a *parser.Arg) (*ir.Value, bool) {
	op, ok := b.expr(a.Value)
	if !ok {
		return nil, false
	}
	if op.val == nil {
		b.errorf(a.Pos, "", "expected a tensor, got the number %g", op.num.v)
		return nil, false
	}
	return op.val, true
}

// numArg evaluates an argument that must be a compile-time number.
func (b *builder) numArg(a *parser.Arg) (number, bool) {
	op, ok := b.expr(a.Value)
	if !ok {
		return number{}, false
	}
	if op.num == nil {
		b.errorf(a.Pos, "use a number or a const", "expected a number, got a tensor")
		return number{}, false
	}
	return *op.num, true
}

// intArg evaluates an argument that must be an integer number.
func (b *builder) intArg(a *parser.Arg) (int, bool) {
	n, ok := b.numArg(a)
	if !ok {
		return 0, false
	}
	if !n.isInt || n.i > 1<<30 || n.i < -1<<30 {
		b.errorf(a.Pos, "", "expected an integer, got %s", n)
		return 0, false
	}
	return int(n.i), true
}

// axisArg reads the axis keyword (default -1) and makes it non-negative.
func (b *builder) axisArg(c *call, rank int) (int, bool) {
	a, ok := c.kw["axis"]
	if !ok {
		return rank - 1, true
	}
	ax, ok := b.intArg(a)
	if !ok {
		return 0, false
	}
	if ax < -rank || ax >= rank {
		b.errorf(a.Pos, "axes count from 0, or from -1 for the last", "axis %d out of range for rank %d", ax, rank)
		return 0, false
	}
	if ax < 0 {
		ax += rank
	}
	return ax, true
}

// listArg returns the items of an argument written as a list.
func (b *builder) listArg(a *parser.Arg) ([]*parser.Expr, bool) {
	e := a.Value
	if len(e.Ops) == 0 && len(e.Left.Ops) == 0 && e.Left.Left.Primary != nil && e.Left.Left.Primary.List != nil {
		return e.Left.Left.Primary.List.Items, true
	}
	if c := soleCall(e); c != nil && !c.HasArgs && b.bad[c.Name] {
		return nil, false
	}
	b.errorf(a.Pos, "write a list: [a, b]", "expected a list")
	return nil, false
}

// sizeListArg evaluates a list of sizes (see sizeExpr).
func (b *builder) sizeListArg(a *parser.Arg) ([]ir.Dim, bool) {
	items, ok := b.listArg(a)
	if !ok {
		return nil, false
	}
	out := make([]ir.Dim, len(items))
	for i, it := range items {
		d, dok := b.sizeExpr(it)
		ok = ok && dok
		out[i] = d
	}
	return out, ok
}

func single(v *ir.Value) ([]operand, bool) { return []operand{{val: v}}, v != nil }

func buildUnary(name string, op ir.Op) func(*builder, *call) ([]operand, bool) {
	return func(b *builder, c *call) ([]operand, bool) {
		x, ok := b.expr(c.pos[0].Value)
		if !ok {
			return nil, false
		}
		if x.num != nil {
			v := foldUnary[name](x.num.v)
			n, err := checkFinite(v, hintFinite, "%s(%s) is %g", name, *x.num, v)
			if err != nil {
				b.errorf(c.Pos, err.Hint, "%s", err.Msg)
				return nil, false
			}
			return []operand{{num: &n}}, true
		}
		return single(b.apply1(op, c.Pos, ir.Attr{}, x.val))
	}
}

func buildMaxMin(elem, reduce ir.Op) func(*builder, *call) ([]operand, bool) {
	return func(b *builder, c *call) ([]operand, bool) {
		if len(c.pos) == 1 {
			if reduce < 0 {
				b.errorf(c.Pos, "write -max(-x, axis=...)", "min over an axis is not an op")
				return nil, false
			}
			return buildReduce(reduce)(b, c)
		}
		if _, ok := c.kw["axis"]; ok {
			b.errorf(c.kw["axis"].Pos, "max(a, b) is element-wise; max(x, axis=...) reduces", "axis given to element-wise %s", c.Name)
			return nil, false
		}
		l, lok := b.expr(c.pos[0].Value)
		r, rok := b.expr(c.pos[1].Value)
		if !lok || !rok {
			return nil, false
		}
		if l.num != nil && r.num != nil {
			n := *l.num
			if (elem == ir.OpMax) == (r.num.v > n.v) {
				n = *r.num
			}
			return []operand{{num: &n}}, true
		}
		return single(b.apply1(elem, c.Pos, ir.Attr{}, b.tensorOf(l, r, c.Pos), b.tensorOf(r, l, c.Pos)))
	}
}

func buildReduce(op ir.Op) func(*builder, *call) ([]operand, bool) {
	return func(b *builder, c *call) ([]operand, bool) {
		x, ok := b.tensorArg(c.pos[0])
		if !ok {
			return nil, false
		}
		ax, ok := b.axisArg(c, len(x.Type.Shape))
		if !ok {
			return nil, false
		}
		return single(b.apply1(op, c.Pos, ir.Attr{Axis: ax}, x))
	}
}

func buildCast(b *builder, c *call) ([]operand, bool) {
	x, ok := b.tensorArg(c.pos[0])
	if !ok {
		return nil, false
	}
	name := ""
	if cl := soleCall(c.pos[1].Value); cl != nil && !cl.HasArgs {
		name = cl.Name
	}
	dt := ir.ParseDType(name)
	if dt == ir.Invalid {
		b.errorf(c.pos[1].Pos, "dtypes are bf16, f16, f32, fp8e4m3 and i32", "cast needs a dtype as its second argument")
		return nil, false
	}
	return single(b.apply1(ir.OpCast, c.Pos, ir.Attr{To: dt}, x))
}

func buildCausal(b *builder, c *call) ([]operand, bool) {
	x, ok := b.tensorArg(c.pos[0])
	if !ok {
		return nil, false
	}
	return single(b.apply1(ir.OpCausal, c.Pos, ir.Attr{}, x))
}

func buildWindow(b *builder, c *call) ([]operand, bool) {
	x, ok := b.tensorArg(c.pos[0])
	w, wok := b.intArg(c.pos[1])
	if !ok || !wok {
		return nil, false
	}
	if w < 1 {
		b.errorf(c.pos[1].Pos, "", "window size must be positive, got %d", w)
		return nil, false
	}
	return single(b.apply1(ir.OpWindow, c.Pos, ir.Attr{W: ir.Const(int64(w))}, x))
}

func buildTopK(b *builder, c *call) ([]operand, bool) {
	x, ok := b.tensorArg(c.pos[0])
	k, kok := b.intArg(c.pos[1])
	if !ok || !kok {
		return nil, false
	}
	return single(b.apply1(ir.OpTopK, c.Pos, ir.Attr{K: k, Axis: len(x.Type.Shape) - 1}, x))
}

func buildSoftcap(b *builder, c *call) ([]operand, bool) {
	x, ok := b.tensorArg(c.pos[0])
	cap, cok := b.numArg(c.pos[1])
	if !ok || !cok {
		return nil, false
	}
	if cap.v <= 0 {
		b.errorf(c.pos[1].Pos, "", "softcap needs a positive cap, got %g", cap.v)
		return nil, false
	}
	return single(b.apply1(ir.OpSoftcap, c.Pos, ir.Attr{Num: cap.v}, x))
}

func buildRope(b *builder, c *call) ([]operand, bool) {
	x, ok := b.tensorArg(c.pos[0])
	p, pok := b.tensorArg(c.pos[1])
	theta := intNumber(10000)
	tok := true
	if a, has := c.kw["theta"]; has {
		theta, tok = b.numArg(a)
	}
	if !ok || !pok || !tok {
		return nil, false
	}
	return single(b.apply1(ir.OpRope, c.Pos, ir.Attr{Num: theta.v}, x, p))
}

func buildGather(b *builder, c *call) ([]operand, bool) {
	t, ok := b.tensorArg(c.pos[0])
	ids, iok := b.tensorArg(c.pos[1])
	if !ok || !iok {
		return nil, false
	}
	return single(b.apply1(ir.OpGather, c.Pos, ir.Attr{}, t, ids))
}

func buildReshape(b *builder, c *call) ([]operand, bool) {
	x, ok := b.tensorArg(c.pos[0])
	shape, sok := b.sizeListArg(c.pos[1])
	if !ok || !sok {
		return nil, false
	}
	return single(b.apply1(ir.OpReshape, c.Pos, ir.Attr{Sizes: shape}, x))
}

func buildTranspose(b *builder, c *call) ([]operand, bool) {
	x, ok := b.tensorArg(c.pos[0])
	if !ok {
		return nil, false
	}
	rank := len(x.Type.Shape)
	var perm []int
	if len(c.pos) == 2 {
		items, lok := b.listArg(c.pos[1])
		if !lok {
			return nil, false
		}
		for _, it := range items {
			ax, aok := b.intArg(&parser.Arg{Pos: it.Pos, Value: it})
			if !aok {
				return nil, false
			}
			perm = append(perm, ax)
		}
	} else {
		if rank < 2 {
			b.errorf(c.Pos, "", "transpose needs rank ≥ 2, got %s", x.Type)
			return nil, false
		}
		for i := range rank {
			perm = append(perm, i)
		}
		perm[rank-1], perm[rank-2] = rank-2, rank-1
	}
	return single(b.apply1(ir.OpTranspose, c.Pos, ir.Attr{Perm: perm}, x))
}

func buildSplit(b *builder, c *call) ([]operand, bool) {
	x, ok := b.tensorArg(c.pos[0])
	sizes, sok := b.sizeListArg(c.pos[1])
	if !ok || !sok {
		return nil, false
	}
	ax, ok := b.axisArg(c, len(x.Type.Shape))
	if !ok {
		return nil, false
	}
	return multiple(b.apply(ir.OpSplit, c.Pos, ir.Attr{Axis: ax, Sizes: sizes}, x))
}

func multiple(vs []*ir.Value) ([]operand, bool) {
	if vs == nil {
		return nil, false
	}
	out := make([]operand, len(vs))
	for i, v := range vs {
		out[i] = operand{val: v}
	}
	return out, true
}

func buildConcat(b *builder, c *call) ([]operand, bool) {
	var args []*ir.Value
	ok := true
	for _, a := range c.pos {
		v, vok := b.tensorArg(a)
		ok = ok && vok
		args = append(args, v)
	}
	if !ok {
		return nil, false
	}
	ax, ok := b.axisArg(c, len(args[0].Type.Shape))
	if !ok {
		return nil, false
	}
	return single(b.apply1(ir.OpConcat, c.Pos, ir.Attr{Axis: ax}, args...))
}

func buildSlice(b *builder, c *call) ([]operand, bool) {
	x, ok := b.tensorArg(c.pos[0])
	start, sok := b.dimExpr(c.pos[1].Value)
	end, eok := b.dimExpr(c.pos[2].Value)
	if !ok || !sok || !eok {
		return nil, false
	}
	ax, ok := b.axisArg(c, len(x.Type.Shape))
	if !ok {
		return nil, false
	}
	return single(b.apply1(ir.OpSlice, c.Pos, ir.Attr{Axis: ax, Start: start, End: end}, x))
}

func buildAppend(b *builder, c *call) ([]operand, bool) {
	kv, ok := b.tensorArg(c.pos[0])
	k, kok := b.tensorArg(c.pos[1])
	v, vok := b.tensorArg(c.pos[2])
	if !ok || !kok || !vok {
		return nil, false
	}
	if r := kv.Ragged; r != nil && len(k.Type.Shape) == 4 {
		// The page table counts this step's tokens: before the append the
		// state holds S fewer.
		kv.Ragged = &ir.Ragged{Axis: r.Axis, Batch: r.Batch, Lens: r.Lens, Extra: r.Extra.Sub(k.Type.Shape[2])}
	}
	if r := kv.Ragged; r != nil && k.Packed != nil && r.Less == nil {
		// Each sequence appends its own packed tokens: before the append
		// the state holds that many fewer.
		kv.Ragged = &ir.Ragged{Axis: r.Axis, Batch: r.Batch, Lens: r.Lens, Extra: r.Extra, Less: k.Packed.Indptr}
	}
	return multiple(b.apply(ir.OpAppend, c.Pos, ir.Attr{}, kv, k, v))
}
