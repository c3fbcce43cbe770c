package cuda

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// A matmul kernel's epilogue is generated from its nodes after the matmul.
// Every value it stores (a kernel output, or the new keys and values an
// append writes) is anchored at one element of the matmul result O: the
// element its chain of views and element-wise ops starts from. Ops that
// combine different columns of O (SwiGLU's gate and up halves of a split,
// RoPE's pairs) tie columns into clusters; tiles of the GEMM are made of
// whole clusters, so every value is computed from the tile it is anchored
// in. Clusters with the same shape come in regular runs (segments), whose
// tiles are enumerated by formula.

// store is one value the epilogue writes.
type store struct {
	x *ir.Value
	// dst is the output value written, or nil for a cache write.
	dst *ir.Value
	app *ir.Node
	c   int
	// anchor is the O-derived value whose inverse map gives the index, when
	// x itself is not derived from O (an append's other operand).
	anchor *ir.Value
}

// segment is a run of clusters of one shape: bases start + i*runStride + j
// (i < nRuns, j < runLen), each with the columns base + offs[q].
type segment struct {
	start, runLen, runStride, nRuns int64
	offs                            []int64
	// symN marks the one segment of a symbolic N (no epilogue columns
	// interact): runLen is N.
	symN bool
	key  string
	// codeBytes is the source size of the segment's epilogue function
	// body, a measure of its element's code (set by emitSegmentFuncs).
	codeBytes int
}

func (s *segment) bases() int64 { return s.runLen * s.nRuns }

type epilogue struct {
	g      *gemmModel
	stores []store
	segs   []segment
	nConst int64
	// derived reports whether a value is computed from O in the kernel.
	derived map[*ir.Value]bool
}

func newEpilogue(g *gemmModel) (*epilogue, error) {
	k := g.k
	ep := &epilogue{g: g, derived: map[*ir.Value]bool{g.o: true}}
	isOut := map[*ir.Value]bool{}
	for _, o := range k.pk.Outputs {
		isOut[o] = true
	}
	for _, n := range append([]*ir.Node{g.mm}, g.epiNodes()...) {
		if n != g.mm {
			for _, a := range n.Args {
				if ep.isDerived(a) {
					for _, o := range n.Outs {
						ep.derived[o] = true
					}
				}
			}
		}
		if n.Op == ir.OpAppend {
			kd, vd := ep.isDerived(n.Args[1]), ep.isDerived(n.Args[2])
			if !kd && !vd {
				return nil, fmt.Errorf("append of values not computed from the matmul")
			}
			for c := range 2 {
				s := store{x: n.Args[1+c], app: n, c: c}
				if !ep.isDerived(s.x) {
					s.anchor = n.Args[2-c]
				}
				ep.stores = append(ep.stores, s)
			}
			continue
		}
		for _, o := range n.Outs {
			if isOut[o] {
				if err := checkDType(o); err != nil {
					return nil, err
				}
				ep.stores = append(ep.stores, store{x: o, dst: o})
			}
		}
	}
	if err := ep.segments(); err != nil {
		return nil, err
	}
	return ep, nil
}

// isDerived reports whether v (through views) is computed from O.
func (ep *epilogue) isDerived(v *ir.Value) bool {
	for {
		if ep.derived[v] {
			return true
		}
		d := v.Def
		if d == nil || d.Op.IsLeaf() || d.Op == ir.OpConst || d.Op == ir.OpSeqLens || !isViewOp(d.Op) {
			return false
		}
		v = d.Args[0]
	}
}

func isViewOp(op ir.Op) bool {
	return op == ir.OpReshape || op == ir.OpTranspose || op == ir.OpSplit || op == ir.OpSlice
}

// cond is a range check of an inverse map: 0 <= x < n.
type cond struct {
	x ix
	n poly
}

// inverse maps an index of O (rows..., column) to the index of v along its
// anchor chain, with the range checks that say whether the element of O
// anchors an element of v at all.
func (ep *epilogue) inverse(v *ir.Value, oIdx []ix) ([]ix, []cond, error) {
	if v == ep.g.o {
		return oIdx, nil, nil
	}
	d := v.Def
	if isViewOp(d.Op) {
		a := d.Args[0]
		ai, cs, err := ep.inverse(a, oIdx)
		if err != nil {
			return nil, nil, err
		}
		switch d.Op {
		case ir.OpTranspose:
			out := make([]ix, len(ai))
			for i, p := range d.Attr.Perm {
				out[i] = ai[p]
			}
			return out, cs, nil
		case ir.OpSplit, ir.OpSlice:
			start := partStart(d, v)
			out := append([]ix(nil), ai...)
			ax := d.Attr.Axis
			out[ax] = ixSub(out[ax], ixp(start))
			return out, append(cs, cond{out[ax], shapeOf(v)[ax]}), nil
		case ir.OpReshape:
			out, err := reshapeIndex(ai, shapeOf(v), shapeOf(a))
			return out, cs, err
		}
	}
	if !ep.g.k.inKernel[v] {
		return nil, nil, fmt.Errorf("%s is not computed from the matmul", v.Ref())
	}
	for _, a := range d.Args {
		if !ep.isDerived(a) {
			continue
		}
		ai, cs, err := ep.inverse(a, oIdx)
		if err != nil {
			return nil, nil, err
		}
		vs := shapeOf(v)
		out := make([]ix, len(vs))
		shift := len(vs) - len(ai)
		for i := range out {
			if j := i - shift; j >= 0 {
				out[i] = ai[j]
			} else {
				out[i] = ixc(0)
			}
		}
		return out, cs, nil
	}
	return nil, nil, fmt.Errorf("%s has no operand computed from the matmul", v.Ref())
}

// oRowIdx is the symbolic row part of an O index used by the analysis.
func (ep *epilogue) oIdx(c ix) []ix {
	idx := make([]ix, len(ep.g.os))
	for i := range idx[:len(idx)-1] {
		idx[i] = ixv(fmt.Sprintf("o%d", i))
	}
	idx[len(idx)-1] = c
	return idx
}

// deps returns the O columns read to compute v at idx (numerically, for a
// column given by env).
func (ep *epilogue) deps(v *ir.Value, idx []ix, env map[string]int64, out *[]int64) error {
	if !ep.isDerived(v) {
		return nil
	}
	if v == ep.g.o {
		c, ok := idx[len(idx)-1].eval(env)
		if !ok {
			return fmt.Errorf("an epilogue column depends on the row")
		}
		*out = append(*out, c)
		return nil
	}
	d := v.Def
	if isViewOp(d.Op) {
		ai, err := viewArgIndex(d, v, idx)
		if err != nil {
			return err
		}
		return ep.deps(d.Args[0], ai, env, out)
	}
	vs := shapeOf(v)
	if d.Op == ir.OpAppend {
		return fmt.Errorf("the appended cache %s is read back in the epilogue", v.Ref())
	}
	if d.Op == ir.OpRope {
		if err := ep.deps(d.Args[0], idx, env, out); err != nil {
			return err
		}
		last := len(vs) - 1 // the head dim, of [B, S, H, Dh] or packed [N, H, Dh]
		dh, _ := vs[last].value()
		p := append([]ix(nil), idx...)
		p[last] = ixMod(ixAdd(idx[last], ixc(dh/2)), ixc(dh))
		return ep.deps(d.Args[0], p, env, out)
	}
	for _, a := range d.Args {
		if err := ep.deps(a, bcastIndex(a, vs, idx), env, out); err != nil {
			return err
		}
	}
	return nil
}

// anchored reports whether column c of O anchors an element of store x
// (row range checks are left to run time).
func anchoredAt(cs []cond, env map[string]int64) bool {
	for _, c := range cs {
		v, ok := c.x.eval(env)
		if !ok {
			continue
		}
		n, okn := c.n.value()
		if v < 0 || okn && v >= n {
			return false
		}
	}
	return true
}

// segments computes the column clusters and their segments.
func (ep *epilogue) segments() error {
	n, ok := ep.g.n.value()
	interacts := false
	for _, nd := range ep.g.epiNodes() {
		cnt := 0
		for _, a := range nd.Args {
			if ep.isDerived(a) {
				cnt++
			}
		}
		if cnt > 1 || nd.Op == ir.OpRope && ep.isDerived(nd.Args[0]) {
			interacts = true
		}
	}
	if !ok {
		if interacts {
			return fmt.Errorf("an epilogue combining columns needs a constant N")
		}
		ep.segs = []segment{{start: 0, runLen: 0, runStride: 0, nRuns: 1, offs: []int64{0}, symN: true}}
		return nil
	}
	ep.nConst = n
	parent := make([]int64, n)
	for i := range parent {
		parent[i] = int64(i)
	}
	var find func(int64) int64
	find = func(x int64) int64 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	// sig marks, per column, the stores anchored there: segments keep one
	// set of stores per cluster position.
	sig := make([]uint64, n)
	cvar := ixv("c")
	for si, s := range ep.stores {
		x := s.x
		if s.anchor != nil {
			x = s.anchor
		}
		idx, cs, err := ep.inverse(x, ep.oIdx(cvar))
		if err != nil {
			return err
		}
		for c := int64(0); c < n; c++ {
			env := map[string]int64{"c": c}
			if !anchoredAt(cs, env) {
				continue
			}
			sig[c] |= 1 << (uint(si) % 64)
			if interacts && s.anchor == nil {
				var cols []int64
				if err := ep.deps(x, idx, env, &cols); err != nil {
					return err
				}
				for _, d := range cols {
					if d < 0 || d >= n {
						return fmt.Errorf("epilogue column %d out of range", d)
					}
					a, b := find(c), find(d)
					if a != b {
						parent[max(a, b)] = min(a, b)
					}
				}
			}
		}
	}
	members := map[int64][]int64{}
	for c := int64(0); c < n; c++ {
		r := find(c)
		members[r] = append(members[r], c-r)
	}
	// Runs of consecutive bases with one cluster shape, then segments of
	// equally long, equally spaced runs.
	type run struct {
		start, n int64
		key      string
	}
	var runs []run
	keyOf := func(offs []int64) string {
		parts := make([]string, len(offs))
		for i, o := range offs {
			parts[i] = strconv.FormatInt(o, 10)
		}
		return strings.Join(parts, ",")
	}
	for c := int64(0); c < n; c++ {
		offs, ok := members[c]
		if !ok {
			continue
		}
		key := keyOf(offs)
		for _, o := range offs {
			key += fmt.Sprintf(";%x", sig[c+o])
		}
		if l := len(runs); l > 0 && runs[l-1].key == key && runs[l-1].start+runs[l-1].n == c {
			runs[l-1].n++
			continue
		}
		runs = append(runs, run{start: c, n: 1, key: key})
	}
	for _, r := range runs {
		if l := len(ep.segs); l > 0 {
			s := &ep.segs[l-1]
			if s.key == r.key && s.runLen == r.n && (s.nRuns == 1 || r.start-(s.start+(s.nRuns-1)*s.runStride) == s.runStride) {
				if s.nRuns == 1 {
					s.runStride = r.start - s.start
				}
				s.nRuns++
				continue
			}
		}
		offs := members[r.start]
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		ep.segs = append(ep.segs, segment{start: r.start, runLen: r.n, runStride: r.n, nRuns: 1, offs: offs, key: r.key})
	}
	return nil
}

// width is the number of bases a tile of tn slots holds in segment s: a
// multiple of 8 so that slot groups of 8 are column runs.
func (s *segment) width(tn int) int64 {
	w := int64(tn) / int64(len(s.offs))
	if w >= 8 {
		w -= w % 8
	}
	return max(w, 1)
}

// vec8 reports whether every group of 8 slots of the segment's tiles is 8
// contiguous columns starting at a multiple of 8.
func (s *segment) vec8(tn int) bool {
	if s.symN {
		return true
	}
	if s.width(tn)%8 != 0 || s.start%8 != 0 || s.runLen%8 != 0 || s.runStride%8 != 0 {
		return false
	}
	for _, o := range s.offs {
		if o%8 != 0 {
			return false
		}
	}
	return true
}

// vec64 reports whether every group of 64 slots of the segment's tiles is
// 64 contiguous columns, as far as its columns exist: a group starts at a
// run's start or 64 slots into it, and its columns past the segment are
// past every column.
func (s *segment) vec64(tn int) bool {
	return s.symN || s.width(tn)%64 == 0 && (s.nRuns == 1 || s.runLen%64 == 0)
}

// tiles is the segment's tile count for tiles of tn slots.
func (s *segment) tiles(tn int, n ix) ix {
	w := s.width(tn)
	if s.symN {
		return ixDiv(ixAdd(n, ixc(w-1)), ixc(w))
	}
	return ixc((s.bases() + w - 1) / w)
}

// colOf is the column of base index beta (< bases) of the segment.
func (s *segment) colOf(beta ix) ix {
	if s.symN || s.nRuns == 1 {
		return ixAdd(ixc(s.start), beta)
	}
	return ixAdd(ixc(s.start), ixAdd(ixMul(ixDiv(beta, ixc(s.runLen)), ixc(s.runStride)), ixMod(beta, ixc(s.runLen))))
}
