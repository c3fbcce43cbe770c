package specgen

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// matmul multiplies x by a weight [K, N], by a batched operand with x's
// leading axes, or by x's own transpose; then, often, applies an epilogue
// the epilogue pass absorbs: a bias, an activation, a residual, SwiGLU
// across the two halves.
func (g *gen) matmul(x *value) bool {
	r := len(x.shape)
	if r < 2 {
		return false
	}
	k := x.shape[r-1]
	var m *value
	switch {
	case r >= 2 && g.coin(4):
		out := append(append(ir.Shape(nil), x.shape[:r-1]...), x.shape[r-2])
		m = g.bind(x.dt, out, "%[1]s @ transpose(%[1]s)", x)
	case r >= 3 && g.coin(3):
		n := ir.Const(g.size())
		rhs := append(append(ir.Shape(nil), x.shape[:r-2]...), k, n)
		y := g.leaf("input", x.dt, rhs)
		out := append(append(ir.Shape(nil), x.shape[:r-1]...), n)
		m = g.bind(x.dt, out, "%s @ %s", x, y)
	default:
		if _, ok := k.Value(); !ok {
			return false
		}
		n := ir.Const(g.size())
		if g.coin(3) {
			n = ir.Const(2 * g.size())
		}
		w := g.leaf("param", x.dt, ir.Shape{k, n})
		out := append(append(ir.Shape(nil), x.shape[:r-1]...), n)
		m = g.bind(x.dt, out, "%s @ %s", x, w)
	}
	for range g.src.IntN(3) {
		g.epilogue(m)
		m = g.vals[len(g.vals)-1]
	}
	return true
}

// epilogue applies one element-wise op to a matmul's result m.
func (g *gen) epilogue(m *value) {
	n := m.shape[len(m.shape)-1]
	switch g.src.IntN(4) {
	case 0:
		b := g.weight(m.dt, ir.Shape{n})
		g.bind(m.dt, m.shape, "%s + %s", m, b)
	case 1:
		if c, ok := n.Value(); ok && c%2 == 0 {
			half := append(append(ir.Shape(nil), m.shape[:len(m.shape)-1]...), ir.Const(c/2))
			gu := g.bindMany(m.dt, []ir.Shape{half, half}, fmt.Sprintf("split(%%s, [%d, %d], axis=-1)", c/2, c/2), m)
			g.bind(m.dt, half, "silu(%s) * %s", gu[0], gu[1])
			return
		}
		g.unary(m)
	case 2:
		g.binary(m)
	default:
		g.unary(m)
	}
}

// constAxes lists the axes of x with a constant extent of at least min.
func constAxes(x *value, min int64) []int {
	var out []int
	for i, d := range x.shape {
		if n, ok := d.Value(); ok && n >= min {
			out = append(out, i)
		}
	}
	return out
}

// split cuts a constant axis into two or three parts.
func (g *gen) split(x *value) bool {
	axes := constAxes(x, 2)
	if len(axes) == 0 {
		return false
	}
	axis := axes[g.src.IntN(len(axes))]
	n, _ := x.shape[axis].Value()
	first := 1 + int64(g.src.IntN(int(n)-1))
	parts := []int64{first, n - first}
	if n-first >= 2 && g.coin(2) {
		second := 1 + int64(g.src.IntN(int(n-first)-1))
		parts = []int64{first, second, n - first - second}
	}
	shapes := make([]ir.Shape, len(parts))
	words := make([]string, len(parts))
	for i, p := range parts {
		shapes[i] = append(ir.Shape(nil), x.shape...)
		shapes[i][axis] = ir.Const(p)
		words[i] = fmt.Sprint(p)
	}
	g.bindMany(x.dt, shapes, fmt.Sprintf("split(%%s, [%s], axis=%s)", strings.Join(words, ", "), g.axis(axis, len(x.shape))), x)
	return true
}

// slice takes a contiguous range of a constant axis.
func (g *gen) slice(x *value) bool {
	axes := constAxes(x, 2)
	if len(axes) == 0 {
		return false
	}
	axis := axes[g.src.IntN(len(axes))]
	n, _ := x.shape[axis].Value()
	start := int64(g.src.IntN(int(n)))
	end := start + 1 + int64(g.src.IntN(int(n-start)))
	shape := append(ir.Shape(nil), x.shape...)
	shape[axis] = ir.Const(end - start)
	g.bind(x.dt, shape, fmt.Sprintf("slice(%%s, %d, %d, axis=%s)", start, end, g.axis(axis, len(x.shape))), x)
	return true
}

// reshape splits a constant axis into two or merges two adjacent axes.
func (g *gen) reshape(x *value) bool {
	var shape ir.Shape
	r := len(x.shape)
	if r >= 2 && g.coin(2) {
		i := g.src.IntN(r - 1)
		shape = append(append(append(ir.Shape(nil), x.shape[:i]...), x.shape[i].Mul(x.shape[i+1])), x.shape[i+2:]...)
	} else {
		var cands [][3]int64
		for _, i := range constAxes(x, 4) {
			n, _ := x.shape[i].Value()
			for a := int64(2); a < n; a++ {
				if n%a == 0 {
					cands = append(cands, [3]int64{int64(i), a, n / a})
				}
			}
		}
		if len(cands) == 0 {
			return false
		}
		c := cands[g.src.IntN(len(cands))]
		i := int(c[0])
		shape = append(append(append(ir.Shape(nil), x.shape[:i]...), ir.Const(c[1]), ir.Const(c[2])), x.shape[i+1:]...)
	}
	g.bind(x.dt, shape, "reshape(%s, "+shape.String()+")", x)
	return true
}

// transpose swaps the last two axes or permutes them all.
func (g *gen) transpose(x *value) bool {
	r := len(x.shape)
	if r < 2 {
		return false
	}
	if g.coin(2) {
		shape := append(ir.Shape(nil), x.shape...)
		shape[r-1], shape[r-2] = shape[r-2], shape[r-1]
		g.bind(x.dt, shape, "transpose(%s)", x)
		return true
	}
	perm := make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	for i := r - 1; i > 0; i-- {
		j := g.src.IntN(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	shape := make(ir.Shape, r)
	words := make([]string, r)
	for i, p := range perm {
		shape[i] = x.shape[p]
		words[i] = fmt.Sprint(p)
	}
	g.bind(x.dt, shape, "transpose(%s, ["+strings.Join(words, ", ")+"])", x)
	return true
}

// concat joins x with itself or a fresh leaf along one axis.
func (g *gen) concat(x *value) bool {
	axis := g.src.IntN(len(x.shape))
	y := x
	if g.coin(3) {
		other := append(ir.Shape(nil), x.shape...)
		other[axis] = ir.Const(g.size())
		y = g.weight(x.dt, other)
	}
	shape := append(ir.Shape(nil), x.shape...)
	shape[axis] = x.shape[axis].Add(y.shape[axis])
	g.bind(x.dt, shape, "concat(%s, %s, axis="+g.axis(axis, len(x.shape))+")", x, y)
	return true
}

// gather looks rows of a table up by i32 ids, an embedding.
func (g *gen) gather() bool {
	ids := [][]ir.Dim{{ir.Sym("B"), ir.Sym("S")}, {ir.Sym("B")}, {ir.Sym("S")}, {ir.Sym("B"), ir.Sym("S"), ir.Const(2)}}[g.src.IntN(4)]
	table := g.leaf("param", g.dt, ir.Shape{ir.Const(g.size() + 3), ir.Const(g.width)})
	id := g.leaf("input", "i32", ids)
	g.bind(g.dt, append(append(ir.Shape(nil), ids...), ir.Const(g.width)), "gather(%s, %s)", table, id)
	return true
}

// positions returns the spec's i32[B, S] position input.
func (g *gen) positions() *value {
	if g.pos == nil {
		g.pos = g.leaf("input", "i32", ir.Shape{ir.Sym("B"), ir.Sym("S")})
	}
	return g.pos
}

// rope rotates x : [B, S, n] as heads [B, S, h, dh] (dh even) at the
// positions, and merges the heads back.
func (g *gen) rope(x *value) bool {
	if len(x.shape) != 3 || !x.shape[0].Equal(ir.Sym("B")) || !x.shape[1].Equal(ir.Sym("S")) {
		return false
	}
	n, ok := x.shape[2].Value()
	if !ok || n%2 != 0 {
		return false
	}
	var dhs []int64
	for dh := int64(2); dh <= n; dh += 2 {
		if n%dh == 0 {
			dhs = append(dhs, dh)
		}
	}
	dh := dhs[g.src.IntN(len(dhs))]
	theta := g.pick("", ", theta=500000", ", theta=10")
	g.bind(x.dt, x.shape, fmt.Sprintf("reshape(rope(reshape(%%s, [B, S, %d, %d]), %%s%s), [B, S, %d])", n/dh, dh, theta, n), x, g.positions())
	return true
}
