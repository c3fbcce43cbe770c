package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// sub is one mixed-radix digit of a logical axis: size positions, each
// stride elements apart in the buffer.
type sub struct{ size, stride poly }

// axisMap maps an index i of one logical axis to memory: the digits of
// i + off over subs (outermost first), each times its stride.
type axisMap struct {
	subs []sub
	off  poly
}

// view is how a kernel reads a value it does not compute: a buffer (a
// kernel parameter) and, per logical axis, the digits and strides reaching
// it through reshapes, transposes, splits and slices. A value in a paged or
// ragged KV cache is addressed through the page table instead (cache).
type view struct {
	buf   *ir.Value
	dt    ir.DType
	axes  []axisMap
	base  poly
	cache *cacheView
}

// cacheView is a read of a K or V cache in a paged or ragged layout: the
// logical cache [B, G, T+S, Dh] seen through the permutation perm (logical
// axis i of the read is cache axis perm[i]).
type cacheView struct {
	app    *ir.Node // the append writing the cache
	c      int      // 0 for K, 1 for V
	layout *ir.Layout
	perm   []int
}

// index maps a read's indices idx to the cache's (sequence, kv head,
// token, dim).
func (c *cacheView) index(idx []ix) []ix {
	ci := make([]ix, 4)
	for i, p := range c.perm {
		ci[p] = idx[i]
	}
	return ci
}

// shapeOf returns a value's shape as polynomials.
func shapeOf(v *ir.Value) []poly { return polysOf(v.Type.Shape) }

// polysOf returns a shape as polynomials.
func polysOf(sh ir.Shape) []poly {
	out := make([]poly, len(sh))
	for i, d := range sh {
		out[i] = polyOf(d)
	}
	return out
}

func rowMajor(shape []poly) []axisMap {
	axes := make([]axisMap, len(shape))
	stride := pconst(1)
	for i := len(shape) - 1; i >= 0; i-- {
		axes[i] = axisMap{subs: []sub{{shape[i], stride}}, off: poly{}}
		stride = stride.mul(shape[i])
	}
	return axes
}

// storedAxes maps the axes of a value of shape shape to a buffer holding
// it in layout l: row-major over the axes in l's order (in their own order
// when l is nil).
func storedAxes(shape []poly, l plan.Layout) []axisMap {
	if l == nil {
		return rowMajor(shape)
	}
	stored := make([]poly, len(l))
	for j, ax := range l {
		stored[j] = shape[ax]
	}
	buf := rowMajor(stored)
	axes := make([]axisMap, len(shape))
	for j, ax := range l {
		axes[ax] = buf[j]
	}
	return axes
}

// viewOf builds the view of a value of graph g read from memory; layouts
// are the plan's stored layouts (plan.Plan.Layouts).
func viewOf(v *ir.Value, g *ir.Graph, layouts map[*ir.Value]plan.Layout) (*view, error) {
	d := v.Def
	if d != nil && plan.IsView(d.Op) && !d.Op.IsLeaf() {
		switch d.Op {
		case ir.OpConst, ir.OpSeqLens:
			return nil, fmt.Errorf("%s is not stored in memory", v.Ref())
		}
		a, err := viewOf(d.Args[0], g, layouts)
		if err != nil {
			return nil, err
		}
		return a.through(d, v)
	}
	if plan.InCache(v) {
		return cacheValueView(v)
	}
	if d != nil && d.Op == ir.OpState && d.Attr.Layout != nil && d.Attr.Layout.Kind != ir.Contiguous {
		return nil, fmt.Errorf("state %s with a %s layout is read only through append", v.Ref(), d.Attr.Layout.Kind)
	}
	if d != nil && d.Op == ir.OpState {
		if g.AppendOf(v) != nil {
			return stateView(v, g), nil
		}
	}
	return &view{buf: codegen.Buffer(v), dt: v.Type.DType, axes: storedAxes(shapeOf(v), layouts[v]), base: poly{}}, nil
}

// stateView is the view of contiguous state v ([2, B, G, T, Dh]) that an
// append writes: its buffer holds [2, B, G, T+S, Dh] (ir.Graph.StorageShape),
// the T cached tokens of each row first.
func stateView(v *ir.Value, g *ir.Graph) *view {
	axes := rowMajor(polysOf(g.StorageShape(v)))
	for i, s := range shapeOf(v) {
		axes[i].subs[0].size = s
	}
	return &view{buf: v, dt: v.Type.DType, axes: axes, base: poly{}}
}

// cacheValueView is the view of a whole cache an append returns. A
// contiguous cache is strided: [2, B, G, T+S, Dh] in the state's buffer.
func cacheValueView(v *ir.Value) (*view, error) {
	app := v.Def
	c := 0
	if v == app.Outs[1] {
		c = 1
	}
	state := app.Args[0]
	lay := state.Def.Attr.Layout
	if lay == nil || lay.Kind == ir.Contiguous {
		shape := shapeOf(v)
		n := pconst(1)
		for _, s := range shape {
			n = n.mul(s)
		}
		return &view{buf: state, dt: v.Type.DType, axes: rowMajor(shape), base: n.scale(int64(c))}, nil
	}
	return &view{buf: state, dt: v.Type.DType, cache: &cacheView{app: app, c: c, layout: lay, perm: []int{0, 1, 2, 3}}}, nil
}

func (w *view) clone() *view {
	c := *w
	c.axes = make([]axisMap, len(w.axes))
	for i, a := range w.axes {
		c.axes[i] = axisMap{subs: append([]sub(nil), a.subs...), off: a.off}
	}
	if w.cache != nil {
		cc := *w.cache
		cc.perm = append([]int(nil), w.cache.perm...)
		c.cache = &cc
	}
	return &c
}

// through applies view node d (giving value out) to the view of its input.
func (w *view) through(d *ir.Node, out *ir.Value) (*view, error) {
	w = w.clone()
	if w.cache != nil {
		if d.Op != ir.OpTranspose {
			return nil, fmt.Errorf("a paged or ragged cache is read through %s: only transposes are supported", d.Op)
		}
		perm := make([]int, len(d.Attr.Perm))
		for i, p := range d.Attr.Perm {
			perm[i] = w.cache.perm[p]
		}
		w.cache.perm = perm
		return w, nil
	}
	switch d.Op {
	case ir.OpTranspose:
		axes := make([]axisMap, len(d.Attr.Perm))
		for i, p := range d.Attr.Perm {
			axes[i] = w.axes[p]
		}
		w.axes = axes
	case ir.OpSplit, ir.OpSlice:
		start := partStart(d, out)
		a := &w.axes[d.Attr.Axis]
		a.off = a.off.add(start)
		w.fold(d.Attr.Axis)
		if len(a.subs) == 1 && len(a.off) == 0 {
			// The digit now runs over the part: a later reshape divides
			// and merges digits by their sizes.
			a.subs[0].size = shapeOf(out)[d.Attr.Axis]
		}
	case ir.OpReshape:
		axes, err := reshapeAxes(w.axes, shapeOf(d.Args[0]), shapeOf(out))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", out.Ref(), err)
		}
		w.axes = axes
	default:
		return nil, fmt.Errorf("unsupported view %s", d.Op)
	}
	return w, nil
}

// fold moves the offset of a single-digit axis into the base.
func (w *view) fold(i int) {
	a := &w.axes[i]
	if len(a.off) == 0 {
		return
	}
	switch len(a.subs) {
	case 0:
		a.off = poly{}
	case 1:
		w.base = w.base.add(a.off.mul(a.subs[0].stride))
		a.off = poly{}
	}
}

// reshapeGroups pairs the axes of a reshape's input and output where the
// running products of both shapes meet. Size-1 axes are left out of the
// groups.
func reshapeGroups(sa, so []poly) ([][2][]int, error) {
	var groups [][2][]int
	i, j := 0, 0
	for i < len(sa) || j < len(so) {
		if j < len(so) && so[j].isConst(1) {
			j++
			continue
		}
		if i < len(sa) && sa[i].isConst(1) {
			i++
			continue
		}
		if i >= len(sa) || j >= len(so) {
			return nil, fmt.Errorf("reshape of %v to %v: shapes do not match", sa, so)
		}
		gi, gj := []int{i}, []int{j}
		pa, po := sa[i], so[j]
		for !pa.equal(po) {
			if _, ok := pa.div(po); ok && j+1 < len(so) {
				j++
				gj = append(gj, j)
				po = po.mul(so[j])
				continue
			}
			if _, ok := po.div(pa); ok && i+1 < len(sa) {
				i++
				gi = append(gi, i)
				pa = pa.mul(sa[i])
				continue
			}
			return nil, fmt.Errorf("reshape of %v to %v: cannot group the axes", sa, so)
		}
		groups = append(groups, [2][]int{gi, gj})
		i++
		j++
	}
	return groups, nil
}

// reshapeIndex maps an index of a reshape's output to its input, group by
// group, so that axes outside a group keep their index expressions.
func reshapeIndex(idx []ix, sa, so []poly) ([]ix, error) {
	groups, err := reshapeGroups(sa, so)
	if err != nil {
		return nil, err
	}
	out := zeroIndex(len(sa))
	for _, g := range groups {
		gi, gj := g[0], g[1]
		if len(gi) == 1 && len(gj) == 1 {
			out[gi[0]] = idx[gj[0]]
			continue
		}
		var subIdx []ix
		var subShape []poly
		for _, j := range gj {
			subIdx = append(subIdx, idx[j])
			subShape = append(subShape, so[j])
		}
		lin := linear(subIdx, subShape)
		var inShape []poly
		for _, i := range gi {
			inShape = append(inShape, sa[i])
		}
		for k, x := range delin(lin, inShape) {
			out[gi[k]] = x
		}
	}
	return out, nil
}

// reshapeAxes maps the axes of a reshape's input to its output: each
// group's digits are re-divided among the group's output axes.
func reshapeAxes(in []axisMap, sa, so []poly) ([]axisMap, error) {
	out := make([]axisMap, len(so))
	for j := range out {
		out[j] = axisMap{off: poly{}}
	}
	groups, err := reshapeGroups(sa, so)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		gi, gj := g[0], g[1]
		if len(gi) == 1 && len(gj) == 1 {
			out[gj[0]] = in[gi[0]]
			continue
		}
		var subs []sub
		for _, a := range gi {
			if len(in[a].off) != 0 {
				return nil, fmt.Errorf("reshape of an offset multi-digit axis")
			}
			subs = append(subs, in[a].subs...)
		}
		for k := len(gj) - 1; k >= 0; k-- {
			need := so[gj[k]]
			var mine []sub
			if k == 0 {
				mine, subs = subs, nil
			}
			for k > 0 && !need.isConst(1) {
				if len(subs) == 0 {
					return nil, fmt.Errorf("reshape of %v to %v: digits run out", sa, so)
				}
				last := subs[len(subs)-1]
				if last.size.equal(need) {
					mine = append([]sub{last}, mine...)
					subs = subs[:len(subs)-1]
					need = pconst(1)
				} else if q, ok := need.div(last.size); ok {
					mine = append([]sub{last}, mine...)
					subs = subs[:len(subs)-1]
					need = q
				} else if q, ok := last.size.div(need); ok {
					mine = append([]sub{{need, last.stride}}, mine...)
					subs[len(subs)-1] = sub{q, last.stride.mul(need)}
					need = pconst(1)
				} else {
					return nil, fmt.Errorf("reshape of %v to %v: an axis of %v does not divide evenly", sa, so, need)
				}
			}
			out[gj[k]] = axisMap{subs: simplify(mine), off: poly{}}
		}
	}
	return out, nil
}

// simplify drops size-1 digits and merges neighbours that are contiguous.
func simplify(subs []sub) []sub {
	var out []sub
	for _, s := range subs {
		if s.size.isConst(1) {
			continue
		}
		if n := len(out); n > 0 && out[n-1].stride.equal(s.size.mul(s.stride)) {
			out[n-1] = sub{out[n-1].size.mul(s.size), s.stride}
			continue
		}
		out = append(out, s)
	}
	return out
}

// axisOffset is the element offset of index i along axis a.
func axisOffset(a axisMap, i ix) ix {
	i = ixAdd(i, ixp(a.off))
	switch len(a.subs) {
	case 0:
		return ixc(0)
	case 1:
		return ixMul(i, ixp(a.subs[0].stride))
	}
	total := ixc(0)
	rem := i
	for k := len(a.subs) - 1; k >= 0; k-- {
		s := a.subs[k]
		digit := rem
		if k > 0 {
			digit = ixMod(rem, ixp(s.size))
			rem = ixDiv(rem, ixp(s.size))
		}
		total = ixAdd(total, ixMul(digit, ixp(s.stride)))
	}
	return total
}

// simpleAxis reports whether axis i is one digit without offset; its stride
// is then returned.
func (w *view) simpleAxis(i int) (poly, bool) {
	if w.cache != nil {
		return nil, false
	}
	a := w.axes[i]
	if len(a.off) != 0 || len(a.subs) > 1 {
		return nil, false
	}
	if len(a.subs) == 0 {
		return poly{}, true
	}
	return a.subs[0].stride, true
}

// contiguousLast reports whether the last axis has stride 1 (vector loads).
func (w *view) contiguousLast() bool {
	if len(w.axes) == 0 {
		return false
	}
	st, ok := w.simpleAxis(len(w.axes) - 1)
	return ok && st.isConst(1)
}

// offset is the element offset (from the buffer's start) of index idx of a
// strided view.
func (w *view) offset(idx []ix) ix {
	total := ixp(w.base)
	for i, a := range w.axes {
		total = ixAdd(total, axisOffset(a, idx[i]))
	}
	return total
}

// contig reports whether logical axis i has stride 1 in memory (a cache's
// head-dim axis, or a one-digit axis of stride 1).
func (w *view) contig(i int) bool {
	if w.cache != nil {
		return w.cache.perm[i] == 3
	}
	st, ok := w.simpleAxis(i)
	return ok && st.isConst(1)
}

// partStart is where the part v of a split or slice node d starts along
// the node's axis.
func partStart(d *ir.Node, v *ir.Value) poly {
	if d.Op == ir.OpSlice {
		return polyOf(d.Attr.Start)
	}
	start := poly{}
	for i, o := range d.Outs {
		if o == v {
			break
		}
		start = start.add(polyOf(d.Attr.Sizes[i]))
	}
	return start
}
