package frontend

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/parser"
)

// exprMulti evaluates the right side of a binding of want names.
func (b *builder) exprMulti(e *parser.Expr, want int) []*ir.Value {
	if c := soleCall(e); c != nil && c.HasArgs && builtins[c.Name] != nil && builtins[c.Name].multi {
		outs, ok := b.call(c)
		if !ok {
			return nil
		}
		if len(outs) != want {
			b.errorf(c.Pos, fmt.Sprintf("bind each result: %s", namesHint(len(outs))), "%s returns %d values, bound to %d names", c.Name, len(outs), want)
			return nil
		}
		vals := make([]*ir.Value, len(outs))
		for i, o := range outs {
			vals[i] = o.val
		}
		return vals
	}
	op, ok := b.expr(e)
	if !ok {
		return nil
	}
	if want != 1 {
		b.errorf(e.Pos, "only split and append return several values", "expression gives 1 value, bound to %d names", want)
		return nil
	}
	if op.val == nil {
		b.errorf(e.Pos, "a binding names a tensor; use const for numbers", "a number cannot be bound to a name here")
		return nil
	}
	return []*ir.Value{op.val}
}

func namesHint(n int) string {
	s := "a"
	for i := 1; i < n; i++ {
		s += ", " + string(rune('a'+i))
	}
	return s + " = ..."
}

// soleCall returns the call an expression consists of, or nil.
func soleCall(e *parser.Expr) *parser.Call {
	if len(e.Ops) > 0 || len(e.Left.Ops) > 0 || e.Left.Left.Primary == nil {
		return nil
	}
	return e.Left.Left.Primary.Call
}

// expr evaluates an expression to one tensor or number. ok is false when an
// error was reported.
func (b *builder) expr(e *parser.Expr) (operand, bool) {
	left, ok := b.term(e.Left)
	for _, op := range e.Ops {
		right, rok := b.term(op.Right)
		if !ok || !rok {
			ok = false
			continue
		}
		left, ok = b.binary(op.Op, op.Pos, left, right)
	}
	return left, ok
}

func (b *builder) term(t *parser.Term) (operand, bool) {
	left, ok := b.unary(t.Left)
	for _, op := range t.Ops {
		right, rok := b.unary(op.Right)
		if !ok || !rok {
			ok = false
			continue
		}
		left, ok = b.binary(op.Op, op.Pos, left, right)
	}
	return left, ok
}

func (b *builder) unary(u *parser.Unary) (operand, bool) {
	if u.Neg != nil {
		x, ok := b.unary(u.Neg)
		if !ok {
			return x, false
		}
		if x.num != nil {
			n, err := negate(*x.num)
			if err != nil {
				b.errorf(u.Pos, err.Hint, "%s", err.Msg)
				return operand{}, false
			}
			return operand{num: &n}, true
		}
		v := b.apply1(ir.OpNeg, u.Pos, ir.Attr{}, x.val)
		return operand{val: v}, v != nil
	}
	return b.primary(u.Primary)
}

func (b *builder) primary(p *parser.Primary) (operand, bool) {
	switch {
	case p.Number != nil:
		if i, err := strconv.ParseInt(*p.Number, 10, 64); err == nil {
			n := intNumber(i)
			return operand{num: &n}, true
		}
		v, err := strconv.ParseFloat(*p.Number, 64)
		if err != nil || math.IsInf(v, 0) {
			b.errorf(p.Pos, hintFinite, "number %s is out of range", *p.Number)
			return operand{}, false
		}
		n := floatNumber(v)
		return operand{num: &n}, true
	case p.Paren != nil:
		return b.expr(p.Paren)
	case p.List != nil:
		b.errorf(p.Pos, "lists are arguments of reshape, split, transpose", "a list is not a value")
		return operand{}, false
	case p.Call.HasArgs:
		outs, ok := b.call(p.Call)
		if !ok {
			return operand{}, false
		}
		if len(outs) != 1 {
			b.errorf(p.Pos, fmt.Sprintf("bind the results: %s", namesHint(len(outs))), "%s returns %d values, used as one", p.Call.Name, len(outs))
			return operand{}, false
		}
		return outs[0], true
	}
	return b.lookup(p.Call.Name, p.Pos)
}

// lookup resolves a name used as a value.
func (b *builder) lookup(name string, p lexer.Position) (operand, bool) {
	if b.bad[name] {
		return operand{}, false
	}
	if len(b.frames) > 0 {
		if op, ok := b.frames[len(b.frames)-1].params[name]; ok {
			return op, true
		}
	}
	if c, ok := b.consts[name]; ok {
		return operand{num: &c}, true
	}
	if b.dims[name] {
		b.errorf(p, "dims appear in shapes (reshape, split sizes), not as values", "dim %s is not a value", name)
		return operand{}, false
	}
	if bd, ok := b.scope[name]; ok {
		if len(b.frames) > 0 && bd.kind == "value" {
			fr := b.frames[len(b.frames)-1]
			b.errorf(p, "pass it as a parameter; fn bodies see declared tensors, consts and their parameters", "%s is not a parameter of fn %s", name, fr.fn.Name)
			return operand{}, false
		}
		bd.used = true
		return operand{val: bd.val}, bd.val != nil
	}
	if o, ok := b.outputs[name]; ok {
		if o.val != nil && len(b.frames) == 0 {
			return operand{val: o.val}, true
		}
		b.errorf(p, "assign an output before reading it", "output %s is read before it is assigned", name)
		o.used = true
		return operand{}, false
	}
	b.errorf(p, b.suggest(name), "unknown name %s", name)
	return operand{}, false
}

// suggest proposes a declared name close to an unknown one.
func (b *builder) suggest(name string) string {
	var names []string
	for n := range b.scope {
		names = append(names, n)
	}
	for n := range b.consts {
		names = append(names, n)
	}
	for n := range b.fns {
		names = append(names, n)
	}
	for n := range builtins {
		names = append(names, n)
	}
	sort.Strings(names)
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return "did you mean " + best + "?"
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

var binaryOps = map[string]ir.Op{"+": ir.OpAdd, "-": ir.OpSub, "*": ir.OpMul, "/": ir.OpDiv, "@": ir.OpMatmul}

// binary applies an infix operator, folding numbers and turning a number
// operand into a scalar constant of the tensor's dtype.
func (b *builder) binary(sym string, p lexer.Position, l, r operand) (operand, bool) {
	if l.num != nil && r.num != nil {
		if sym == "@" {
			b.errorf(p, "", "@ needs two tensors")
			return operand{}, false
		}
		n, err := foldBinary(sym, *l.num, *r.num)
		if err != nil {
			b.errorf(p, err.Hint, "%s", err.Msg)
			return operand{}, false
		}
		return operand{num: &n}, true
	}
	op := binaryOps[sym]
	if op == ir.OpMatmul && (l.num != nil || r.num != nil) {
		b.errorf(p, "use * to scale a tensor", "@ needs two tensors, got a number")
		return operand{}, false
	}
	lv, rv := b.tensorOf(l, r, p), b.tensorOf(r, l, p)
	v := b.apply1(op, p, ir.Attr{}, lv, rv)
	return operand{val: v}, v != nil
}

// tensorOf returns x's tensor, or a scalar constant of like's dtype when x is
// a number.
func (b *builder) tensorOf(x, like operand, p lexer.Position) *ir.Value {
	if x.val != nil {
		return x.val
	}
	return b.scalar(x.num.v, like.val.Type.DType, p)
}

func (b *builder) scalar(v float64, dt ir.DType, p lexer.Position) *ir.Value {
	return b.apply1(ir.OpConst, p, ir.Attr{Num: v, To: dt})
}

// sizeExpr evaluates a shape expression that counts elements (a declared
// extent, a reshape extent, a split size): one that no binding of the dims
// makes positive is an error.
func (b *builder) sizeExpr(e *parser.Expr) (ir.Dim, bool) {
	d, ok := b.dimExpr(e)
	if !ok {
		return ir.Dim{}, false
	}
	for _, c := range d.Terms() {
		if c > 0 {
			return d, true
		}
	}
	b.errorf(e.Pos, "a size counts elements: it must be at least 1", "size %s is never positive", d)
	return ir.Dim{}, false
}

// dimExpr evaluates a shape expression: integers, integer consts and dims
// combined with + - * and exact /.
func (b *builder) dimExpr(e *parser.Expr) (ir.Dim, bool) {
	d, ok := b.dimTerm(e.Left)
	for _, op := range e.Ops {
		r, rok := b.dimTerm(op.Right)
		ok = ok && rok
		if !ok {
			continue
		}
		var err error
		if op.Op == "+" {
			d, err = d.AddChecked(r)
		} else {
			d, err = d.SubChecked(r)
		}
		ok = b.dimChecked(err, op.Pos, d, op.Op, r)
	}
	return d, ok
}

// dimChecked reports an overflow of l sym r in a shape at p; false when
// there was one.
func (b *builder) dimChecked(err error, p lexer.Position, l ir.Dim, sym string, r ir.Dim) bool {
	if err != nil {
		b.errorf(p, hintInt64, "shape arithmetic %s %s %s overflows int64", l, sym, r)
	}
	return err == nil
}

func (b *builder) dimTerm(t *parser.Term) (ir.Dim, bool) {
	d, ok := b.dimUnary(t.Left)
	for _, op := range t.Ops {
		r, rok := b.dimUnary(op.Right)
		ok = ok && rok
		if !ok {
			continue
		}
		switch op.Op {
		case "*":
			p, err := d.MulChecked(r)
			if !b.dimChecked(err, op.Pos, d, "*", r) {
				return ir.Dim{}, false
			}
			d = p
		case "/":
			q, exact := d.DivExact(r)
			if !exact {
				b.errorf(op.Pos, "shapes must divide exactly for every binding of the dims", "%s / %s is not an exact division", d, r)
				return ir.Dim{}, false
			}
			d = q
		default:
			b.errorf(op.Pos, "", "%s is not allowed in a shape", op.Op)
			return ir.Dim{}, false
		}
	}
	return d, ok
}

func (b *builder) dimUnary(u *parser.Unary) (ir.Dim, bool) {
	if u.Neg != nil {
		d, ok := b.dimUnary(u.Neg)
		if !ok {
			return ir.Dim{}, false
		}
		n, err := ir.Const(0).SubChecked(d)
		return n, b.dimChecked(err, u.Pos, ir.Const(0), "-", d)
	}
	p := u.Primary
	switch {
	case p.Number != nil:
		v, err := strconv.ParseInt(*p.Number, 10, 64)
		if errors.Is(err, strconv.ErrRange) && !strings.ContainsAny(*p.Number, ".eE") {
			b.errorf(p.Pos, hintInt64, "shape extent %s overflows int64", *p.Number)
			return ir.Dim{}, false
		}
		if err != nil {
			b.errorf(p.Pos, "", "shape extent %s is not an integer", *p.Number)
			return ir.Dim{}, false
		}
		return ir.Const(v), true
	case p.Paren != nil:
		return b.dimExpr(p.Paren)
	case p.Call != nil && !p.Call.HasArgs:
		name := p.Call.Name
		if b.bad[name] {
			return ir.Dim{}, false
		}
		if b.dims[name] {
			return ir.Sym(name), true
		}
		if c, ok := b.consts[name]; ok {
			if !c.isInt {
				b.errorf(p.Pos, "shape extents are integers", "const %s = %g is not an integer", name, c.v)
				return ir.Dim{}, false
			}
			return ir.Const(c.i), true
		}
		if len(b.frames) > 0 {
			if op, ok := b.frames[len(b.frames)-1].params[name]; ok && op.num != nil && op.num.isInt {
				return ir.Const(op.num.i), true
			}
		}
		b.errorf(p.Pos, joinHint(b.suggest(name), "shapes use dims and integer consts"), "unknown dim or const %s", name)
		return ir.Dim{}, false
	}
	b.errorf(p.Pos, "shapes use dims, integer consts, + - * / and parentheses", "not a shape expression")
	return ir.Dim{}, false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
