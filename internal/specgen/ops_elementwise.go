package specgen

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// unaryForms are every element-wise function of the language, each written
// on an argument inside its domain (%[1]s is the operand) so that no value is
// infinite or NaN: exp of a bounded argument, log, sqrt and rsqrt of a
// positive one.
var unaryForms = []string{
	"exp(tanh(%[1]s))",
	"exp(%[1]s - max(%[1]s, axis=-1))",
	"log(%[1]s * %[1]s + 1)",
	"sqrt(%[1]s * %[1]s + 0.5)",
	"rsqrt(%[1]s * %[1]s + 1)",
	"tanh(%[1]s)",
	"silu(%[1]s)",
	"gelu(%[1]s)",
	"sigmoid(%[1]s)",
	"-%[1]s",
	"softcap(%[1]s, 2)",
	"%[1]s * rsqrt(mean(%[1]s * %[1]s, axis=-1) + 0.00001)",
}

func (g *gen) unary(x *value) bool {
	g.bind(x.dt, x.shape, unaryForms[g.src.IntN(len(unaryForms))], x)
	return true
}

// binary combines x with a partner that broadcasts to it (a binding, a
// fresh leaf of a broadcast shape) or a number, in either order.
func (g *gen) binary(x *value) bool {
	y := g.partner(x)
	op := g.pick("+", "-", "*", "/", "max", "min")
	a, b := "%[1]s", "%[2]s"
	if y == nil {
		b = g.pick("0.5", "2", "1.25", "3")
	}
	if g.coin(2) && op != "/" {
		a, b = b, a
	}
	var expr string
	switch {
	case op == "/" && y != nil:
		expr = fmt.Sprintf("%s / (%s * %s + 1)", a, b, b)
	case op == "max" || op == "min":
		expr = fmt.Sprintf("%s(%s, %s)", op, a, b)
	default:
		expr = fmt.Sprintf("%s %s %s", a, op, b)
	}
	if y == nil {
		g.bind(x.dt, x.shape, expr, x)
	} else {
		g.bind(x.dt, x.shape, expr, x, y)
	}
	return true
}

// partner returns a value that broadcasts to x's shape, of x's dtype: a
// binding that does, or a fresh leaf of x's shape with leading axes dropped
// and some set to 1; nil for a number.
func (g *gen) partner(x *value) *value {
	if g.coin(5) {
		return nil
	}
	if !g.coin(3) {
		var fits []*value
		for _, v := range g.vals {
			if v != x && v.dt == x.dt && broadcastsTo(v.shape, x.shape) {
				fits = append(fits, v)
			}
		}
		if len(fits) > 0 {
			return fits[g.src.IntN(len(fits))]
		}
	}
	drop := g.src.IntN(len(x.shape))
	var shape ir.Shape
	for _, d := range x.shape[drop:] {
		if g.coin(4) {
			d = ir.Const(1)
		}
		shape = append(shape, d)
	}
	return g.weight(x.dt, shape)
}

// broadcastsTo reports whether a value of shape s broadcasts to t without
// changing t.
func broadcastsTo(s, t ir.Shape) bool {
	if len(s) > len(t) {
		return false
	}
	off := len(t) - len(s)
	for i, d := range s {
		if !d.Equal(t[off+i]) && !d.Equal(ir.Const(1)) {
			return false
		}
	}
	return true
}

// cast converts x to another float dtype.
func (g *gen) cast(x *value) bool {
	dt := g.pick(floatDTypes...)
	if dt == x.dt {
		return false
	}
	g.bind(dt, x.shape, "cast(%s, "+dt+")", x)
	return true
}

// reduce sums, maxes or averages x over one axis, the last or another,
// written with a positive or a negative index; then, often, combines the
// result with x again (the axis kept with size 1 broadcasts back).
func (g *gen) reduce(x *value) bool {
	axis := g.src.IntN(len(x.shape))
	if g.coin(2) {
		axis = len(x.shape) - 1
	}
	shape := append(ir.Shape(nil), x.shape...)
	shape[axis] = ir.Const(1)
	kind := g.pick("sum", "max", "mean")
	r := g.bind(x.dt, shape, kind+"(%s, axis="+g.axis(axis, len(x.shape))+")", x)
	if g.coin(2) {
		g.bind(x.dt, x.shape, g.pick("%s - %s", "%s * %s", "%s / (%s * %[2]s + 1)"), x, r)
	}
	return true
}

// axis writes axis i of a rank-r tensor as a positive or negative index.
func (g *gen) axis(i, r int) string {
	if g.coin(2) {
		return fmt.Sprint(i - r)
	}
	return fmt.Sprint(i)
}

// softmaxForms are softmax over axis %[2]s of %[1]s, as a call and written
// out (the canonicalize pass recognises both).
var softmaxForms = []string{
	"softmax(%[1]s, axis=%[2]s)",
	"exp(%[1]s - max(%[1]s, axis=%[2]s)) / sum(exp(%[1]s - max(%[1]s, axis=%[2]s)), axis=%[2]s)",
	"exp(tanh(%[1]s)) / sum(exp(tanh(%[1]s)), axis=%[2]s)",
	"exp(%[1]s - max(%[1]s, axis=%[2]s)) * (1 / sum(exp(%[1]s - max(%[1]s, axis=%[2]s)), axis=%[2]s))",
}

func (g *gen) softmax(x *value) bool {
	axis := len(x.shape) - 1
	if g.coin(3) {
		axis = g.src.IntN(len(x.shape))
	}
	form := softmaxForms[g.src.IntN(len(softmaxForms))]
	expr := fmt.Sprintf(form, "%[1]s", g.axis(axis, len(x.shape)))
	g.bind(x.dt, x.shape, expr, x)
	return true
}

// topk is an MoE router's: the k largest of the last axis, softmaxed. Its
// operand is x plus fresh random logits: topk is discontinuous at ties, and
// x alone may hold values equal in the written graph and a rounding apart
// in a plan (heads of an attention that see one key), which then keep
// different entries.
func (g *gen) topk(x *value) bool {
	n, ok := x.shape[len(x.shape)-1].Value()
	if !ok || n < 2 {
		return false
	}
	k := 1 + int64(g.src.IntN(int(n)-1))
	r := g.leaf("input", x.dt, x.shape)
	g.bind(x.dt, x.shape, fmt.Sprintf("softmax(topk(%%s + %%s, %d), axis=-1)", k), x, r)
	return true
}
