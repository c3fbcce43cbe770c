package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// elementwiseKernel generates a Row or Copy kernel: flat over chunks of
// the outputs when there is no reduction and every output has one shape,
// one block per row otherwise.
func (k *kgen) elementwiseKernel() (string, error) {
	outs := k.pk.Outputs
	flat := len(outs) > 0
	for _, n := range k.pk.Nodes {
		if n.Op.Info().Pattern == ir.Reduction {
			flat = false
		}
	}
	for _, o := range outs {
		if !o.Type.Shape.Equal(outs[0].Type.Shape) {
			flat = false
		}
	}
	if flat {
		return k.flatKernel(outs)
	}
	return k.rowKernel()
}

// rowKernel generates a Row kernel: one block per row (grid-stride over
// rows), the element-wise op tree of the kernel's nodes evaluated per
// position with 8-wide vector loads and stores where rows are contiguous and
// aligned, and row reductions (sum, mean, max, softmax, top-k) done with
// warp shuffles and a shared-memory block reduction, each a pass over the
// row: every one but the last a per-row statistic (sum, mean, max), which
// the passes after it read (LayerNorm's mean, then its variance). Values
// that are constant along the row (per-row scalars, reduction results) are
// computed once per row, after the last reduction they depend on.
func (k *kgen) rowKernel() (string, error) {
	first := k.pk.Nodes[0]
	out0 := shapeOf(first.Outs[0])
	if len(out0) == 0 {
		return "", fmt.Errorf("row kernel %s: scalar outputs are not supported", k.pk.Name)
	}
	dom := out0[:len(out0)-1]
	var body writer
	body.indent = 1
	body.line("const i64 rows = %s;", ixp(numel(dom)))
	body.open("for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {")
	rowIdx := delin(ixv("row"), dom)
	for i := range rowIdx {
		if rowIdx[i].k {
			continue
		}
		name := fmt.Sprintf("ri%d", i)
		body.line("const i64 %s = %s;", name, rowIdx[i])
		rowIdx[i] = ixv(name)
	}
	cached, err := k.rowPasses(&body, rowIdx)
	if err != nil {
		return "", err
	}
	if cached {
		k.minBlocks = rowCacheBlocks
	}
	body.close()
	return body.String(), nil
}

// rowPasses writes into body the computation of the row at rowIdx (its
// coordinates over the row domain) by the kernel's nodes: a pass over the
// row for each reduction, then the kernel's outputs, stored to memory.
// Where a ragged row axis leaves the row out, it stores zeros and
// continues the loop around it. cached says whether the passes share
// chunks of the row in registers (rowCache).
func (k *kgen) rowPasses(body *writer, rowIdx []ix) (cached bool, err error) {
	nodes, outs := k.pk.Nodes, k.pk.Outputs
	// level is the number of the row's reductions a value needs: that of
	// the last one it depends on, counting from 1 (0: none).
	var reds []*ir.Node
	level := map[*ir.Value]int{}
	for _, n := range nodes {
		l := 0
		for _, a := range n.Args {
			l = max(l, level[rootOf(a)])
		}
		if n.Op.Info().Pattern == ir.Reduction {
			if m := len(reds); m > 0 && !plan.RowStatistic(reds[m-1]) {
				return false, fmt.Errorf("row kernel %s: %s after %s, which keeps the whole row", k.pk.Name, n.Op, reds[m-1].Op)
			}
			reds = append(reds, n)
			l = len(reds)
		}
		for _, o := range n.Outs {
			level[o] = l
		}
	}

	// idxAt is the index of a value of the kernel's rank at position jj.
	idxAt := func(v *ir.Value, jj ix) []ix {
		s := shapeOf(v)
		idx := append([]ix(nil), rowIdx[len(rowIdx)-(len(s)-1):]...)
		if s[len(s)-1].isConst(1) {
			return append(idx, ixc(0))
		}
		return append(idx, jj)
	}

	// scopes[i] holds the row-invariant values that need the first i
	// reductions, written after the i-th reduction's pass (redW[i-1]).
	scW := make([]writer, len(reds)+1)
	redW := make([]writer, len(reds))
	var bW writer
	scopes := make([]*scope, len(reds)+1)
	for i := range scopes {
		var parent *scope
		if i > 0 {
			parent = scopes[i-1]
		}
		scopes[i] = newScope(&scW[i], parent)
	}
	post := scopes[len(reds)]
	hoist := func(v *ir.Value, idx []ix) *scope { return scopes[level[rootOf(v)]] }
	statLeaf := map[*ir.Value]string{}
	var redLeaf func(e *evaluator, v *ir.Value, idx []ix) (string, bool, error)
	leaf := func(e *evaluator, v *ir.Value, idx []ix) (string, bool, error) {
		if s, ok := statLeaf[v]; ok {
			return s, true, nil
		}
		if redLeaf != nil {
			return redLeaf(e, v, idx)
		}
		return "", false, nil
	}

	// Rows that do not exist (a ragged row axis) store zeros.
	live := ""
	for _, o := range outs {
		if rg := o.Ragged; rg != nil && rg.Axis < len(o.Type.Shape)-1 {
			n, err := k.validLen(o, idxAt(o, ixc(0)))
			if err != nil {
				return false, err
			}
			live = fmt.Sprintf("%s < %s", idxAt(o, ixc(0))[rg.Axis], n)
			break
		}
	}

	// The row's passes share registers where its length is a constant
	// (rowCache); a ragged row's valid length is not.
	var cache *rowCache
	if len(reds) > 0 {
		x := reds[0].Args[0]
		xs := shapeOf(x)
		if rg := x.Ragged; rg == nil || rg.Axis != len(xs)-1 {
			cache = newRowCache(k, ixp(xs[len(xs)-1]))
		}
	}

	for i, red := range reds {
		rl, err := k.rowReduction(red, &redW[i], scopes[i], hoist, leaf, statLeaf, idxAt, cache)
		if err != nil {
			return false, err
		}
		if rl != nil {
			redLeaf = rl
		}
	}

	// Per-row scalar outputs are stored by thread 0; the others in loops
	// grouped by row length.
	type group struct {
		n    poly
		outs []*ir.Value
	}
	var groups []*group
	for _, o := range outs {
		if err := checkDType(o); err != nil {
			return false, err
		}
		s := shapeOf(o)
		if s[len(s)-1].isConst(1) {
			e := &evaluator{k: k, cur: post, leaf: leaf, scopeOf: hoist}
			x, err := e.eval(o, idxAt(o, ixc(0)))
			if err != nil {
				return false, err
			}
			a, err := k.addr(o, idxAt(o, ixc(0)))
			if err != nil {
				return false, err
			}
			post.w.line("if (threadIdx.x == 0) fz_st_%s(%s, %s);", dsuf(o.Type.DType), a, x)
			continue
		}
		var g *group
		for _, c := range groups {
			if c.n.equal(s[len(s)-1]) {
				g = c
			}
		}
		if g == nil {
			g = &group{n: s[len(s)-1]}
			groups = append(groups, g)
		}
		g.outs = append(g.outs, o)
	}
	for _, g := range groups {
		n := ixp(g.n)
		// A ragged last axis: compute the existing positions, zero the rest.
		var ragged *ir.Value
		for _, o := range g.outs {
			if o.Ragged != nil && o.Ragged.Axis == len(o.Type.Shape)-1 {
				ragged = o
			}
		}
		valid := n
		if ragged != nil {
			vl, err := k.validLen(ragged, idxAt(ragged, ixc(0)))
			if err != nil {
				return false, err
			}
			name := k.fresh("len")
			bW.line("const i64 %s = fz_min64(%s, %s);", name, vl, n)
			valid = ixv(name)
		}
		outs := g.outs
		loop := &elemLoop{k: k, n: valid, vec: true, hoist: hoist, leaf: leaf, cache: cache,
			body: func(e *evaluator, jj ix, s *sink) error {
				for _, o := range outs {
					idx := idxAt(o, jj)
					x, err := e.eval(o, idx)
					if err != nil {
						return err
					}
					if err := s.store(o, idx, x); err != nil {
						return err
					}
				}
				return nil
			}}
		if err := loop.emit(&bW, post); err != nil {
			return false, err
		}
		if ragged != nil {
			if err := k.zeroFill(&bW, outs, valid, n, idxAt); err != nil {
				return false, err
			}
		}
	}

	if live != "" {
		body.open("if (!(%s)) {", live)
		if err := k.zeroRow(body, outs, idxAt); err != nil {
			return false, err
		}
		body.line("continue;")
		body.close()
	}
	if cache != nil {
		cache.declare(body)
	}
	body.raw(scW[0].String())
	for i := range reds {
		body.raw(redW[i].String())
		body.raw(scW[i+1].String())
	}
	body.raw(bW.String())
	return cache != nil && len(cache.decls) > 0, nil
}

// rootOf follows views to the value they reinterpret.
func rootOf(v *ir.Value) *ir.Value {
	for v.Def != nil && (v.Def.Op == ir.OpReshape || v.Def.Op == ir.OpTranspose || v.Def.Op == ir.OpSplit || v.Def.Op == ir.OpSlice) {
		v = v.Def.Args[0]
	}
	return v
}

// zeroFill stores 0 to positions [from, to) of the outputs' rows.
func (k *kgen) zeroFill(w *writer, outs []*ir.Value, from, to ix, idxAt func(*ir.Value, ix) []ix) error {
	w.open("for (i64 jj = %s + threadIdx.x; jj < %s; jj += %d) {", from, to, k.nt)
	for _, o := range outs {
		a, err := k.addr(o, idxAt(o, ixv("jj")))
		if err != nil {
			return err
		}
		w.line("fz_st_%s(%s, 0.f);", dsuf(o.Type.DType), a)
	}
	w.close()
	return nil
}

// zeroRow stores 0 to every position of the row of outputs outs.
func (k *kgen) zeroRow(w *writer, outs []*ir.Value, idxAt func(*ir.Value, ix) []ix) error {
	for _, o := range outs {
		s := shapeOf(o)
		if err := k.zeroFill(w, []*ir.Value{o}, ixc(0), ixp(s[len(s)-1]), idxAt); err != nil {
			return err
		}
	}
	return nil
}

// rowReduction emits the statistics pass of the row's reduction into w and
// registers its result as a leaf: sum, mean and max give a per-row scalar;
// softmax keeps the row's max and sum of exponentials; top-k the indices of
// the k largest entries.
func (k *kgen) rowReduction(red *ir.Node, w *writer, pre *scope, hoist func(*ir.Value, []ix) *scope,
	leaf func(*evaluator, *ir.Value, []ix) (string, bool, error), stat map[*ir.Value]string, idxAt func(*ir.Value, ix) []ix, cache *rowCache) (func(*evaluator, *ir.Value, []ix) (string, bool, error), error) {
	x := red.Args[0]
	xs := shapeOf(x)
	if red.Attr.Axis != len(xs)-1 {
		return nil, fmt.Errorf("row kernel %s: reduction over axis %d is not the last", k.pk.Name, red.Attr.Axis)
	}
	n := ixp(xs[len(xs)-1])
	if rg := x.Ragged; rg != nil && rg.Axis == len(xs)-1 {
		vl, err := k.validLen(x, idxAt(x, ixc(0)))
		if err != nil {
			return nil, err
		}
		name := k.fresh("len")
		w.line("const i64 %s = fz_min64(%s, %s);", name, vl, n)
		n = ixv(name)
	}
	loop := func(body func(e *evaluator, xv string, jj ix) error) error {
		l := &elemLoop{k: k, n: n, vec: true, hoist: hoist, leaf: leaf, cache: cache,
			body: func(e *evaluator, jj ix, s *sink) error {
				xv, err := e.eval(x, idxAt(x, jj))
				if err != nil {
					return err
				}
				return body(e, xv, jj)
			}}
		return l.emit(w, pre)
	}
	out := red.Outs[0]
	switch red.Op {
	case ir.OpSum, ir.OpMean, ir.OpReduceMax:
		acc := k.fresh("acc")
		init, step, fin := "0.f", "%s += %s;", "fz_block_sum"
		if red.Op == ir.OpReduceMax {
			init, step, fin = "-FZ_INF", "%s = fmaxf(%s, %s);", "fz_block_max"
		}
		w.line("float %s = %s;", acc, init)
		err := loop(func(e *evaluator, xv string, jj ix) error {
			if red.Op == ir.OpReduceMax {
				e.cur.w.line(step, acc, acc, xv)
			} else {
				e.cur.w.line(step, acc, xv)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		w.line("%s = %s(%s);", acc, fin, acc)
		if red.Op == ir.OpMean {
			w.line("%s = %s > 0 ? %s / (float)%s : 0.f;", acc, n, acc, n)
		}
		stat[out] = acc
		return nil, nil
	case ir.OpSoftmax:
		m, s := k.fresh("m"), k.fresh("s")
		w.line("float %s = -FZ_INF, %s = 0.f;", m, s)
		err := loop(func(e *evaluator, xv string, jj ix) error {
			e.cur.w.line("fz_ms_add(%s, %s, %s);", m, s, xv)
			return nil
		})
		if err != nil {
			return nil, err
		}
		w.line("fz_block_ms(%s, %s);", m, s)
		w.line("const float inv%s = %s > 0.f ? 1.f / %s : 0.f;", s, s, s)
		// The softmax value at a position is computed where it is read.
		return func(e *evaluator, v *ir.Value, idx []ix) (string, bool, error) {
			if v != out {
				return "", false, nil
			}
			xv, err := e.eval(x, idx)
			if err != nil {
				return "", false, err
			}
			return fmt.Sprintf("(%s == -FZ_INF ? 0.f : fz_exp(%s - %s) * inv%s)", m, xv, m, s), true, nil
		}, nil
	case ir.OpTopK:
		kk := red.Attr.K
		if kk > 64 {
			return nil, fmt.Errorf("row kernel %s: top-k with k = %d > 64", k.pk.Name, kk)
		}
		w.line("__shared__ i64 sel[%d];", kk)
		w.open("for (int r = 0; r < %d; r++) {", kk)
		bv, bi := k.fresh("bv"), k.fresh("bi")
		w.line("float %s = -FZ_INF; i64 %s = 0x7fffffffffffffffLL;", bv, bi)
		err := loop(func(e *evaluator, xv string, jj ix) error {
			e.cur.w.line("bool taken = false;")
			e.cur.w.line("for (int q = 0; q < r; q++) taken |= sel[q] == %s;", jj)
			e.cur.w.line("if (!taken && fz_better(%s, %s, %s, %s)) { %s = %s; %s = %s; }", xv, jj, bv, bi, bv, xv, bi, jj)
			return nil
		})
		if err != nil {
			return nil, err
		}
		w.line("fz_block_argmax(%s, %s);", bv, bi)
		w.line("if (threadIdx.x == 0) sel[r] = %s == -FZ_INF && %s == 0x7fffffffffffffffLL ? -1 : %s;", bv, bi, bi)
		// The next round's scan reads sel[r]: without this barrier a warp
		// could scan before thread 0 wrote it and pick the same position
		// again (racecheck over Mixtral's router, 2026-12-06).
		w.line("__syncthreads();")
		w.close()
		return func(e *evaluator, v *ir.Value, idx []ix) (string, bool, error) {
			if v != out {
				return "", false, nil
			}
			xv, err := e.eval(x, idx)
			if err != nil {
				return "", false, err
			}
			j := idx[len(idx)-1]
			t := k.fresh("tk")
			e.cur.w.line("bool %s = false;", t)
			e.cur.w.line("for (int q = 0; q < %d; q++) %s |= sel[q] == %s;", kk, t, j)
			return fmt.Sprintf("(%s ? %s : -FZ_INF)", t, xv), true, nil
		}, nil
	default:
		return nil, fmt.Errorf("row kernel %s: unsupported reduction %s", k.pk.Name, red.Op)
	}

}
