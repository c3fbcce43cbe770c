package cuda

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// sink receives the stores of an element body: in a vector body, stores to
// a contiguous row go to an 8-lane array written with one vector store;
// other stores are scalar.
type sink struct {
	k      *kgen
	w      func() *writer
	vector bool
	stores []vecStore
	seen   map[string]int
}

type vecStore struct {
	arr, ptr string
	dt       ir.DType
}

type vecLoad struct {
	arr, ptr string
	dt       ir.DType
}

// store writes val to element idx of kernel output v.
func (s *sink) store(v *ir.Value, idx []ix, val string) error {
	w, err := s.k.viewOf(v)
	if err != nil {
		return err
	}
	n := len(idx)
	if s.vector && n > 0 && idx[n-1].s == "jj" && !mentionsJ(idx[:n-1]) && w.contiguousLast() {
		at := append(append([]ix(nil), idx[:n-1]...), ixv("j0"))
		ptr, err := s.k.addr(v, at)
		if err != nil {
			return err
		}
		i, ok := s.seen[ptr]
		if !ok {
			i = len(s.stores)
			s.seen[ptr] = i
			s.stores = append(s.stores, vecStore{arr: s.k.fresh("vo"), ptr: ptr, dt: w.dt})
		}
		s.w().line("%s[u] = %s;", s.stores[i].arr, val)
		return nil
	}
	a, err := s.k.addr(v, idx)
	if err != nil {
		return err
	}
	s.w().line("fz_st_%s(%s, %s);", dsuf(w.dt), a, val)
	return nil
}

// mentionsJ reports whether indices use the element loop variable.
func mentionsJ(idx []ix) bool {
	for _, x := range idx {
		if strings.Contains(x.s, "jj") {
			return true
		}
	}
	return false
}

// lanes is the generated code of an element body for position jj: in a
// vector body, the 8-lane loads to do before the lanes, the lane code, and
// the vector stores after them.
type lanes struct {
	loads  []vecLoad
	stores []vecStore
	body   string
	// cached are the loads into a rowCache's registers this body makes
	// (emitted by rowCache.emit); reads of chunks an earlier pass cached
	// are in neither list. unpacks are the packed cached chunks it reads.
	cached  []vecLoad
	unpacks []unpack
}

// unpack is a packed cached chunk arr of dtype dt that a body reads
// through the local array local.
type unpack struct {
	arr, local string
	dt         ir.DType
}

// alignment lists the conditions under which the vector body may run for
// the chunk starting at j0 (at the row's start: at chunk 0), one a vector
// access.
func (c *lanes) alignment(atRowStart bool) []string {
	var conds []string
	ptr := func(p string) string {
		if atRowStart {
			return atZero(p)
		}
		return p
	}
	for _, ld := range append(append([]vecLoad(nil), c.loads...), c.cached...) {
		conds = append(conds, fmt.Sprintf("fz_aligned(%s, %d)", ptr(ld.ptr), vecAlign(ld.dt)))
	}
	for _, st := range c.stores {
		conds = append(conds, fmt.Sprintf("fz_aligned(%s, %d)", ptr(st.ptr), vecAlign(st.dt)))
	}
	return conds
}

// aligned is alignment's conditions as one C condition.
func (c *lanes) aligned(atRowStart bool) string { return allOf(c.alignment(atRowStart)) }

// allOf is the conjunction of C conditions, "true" for none.
func allOf(conds []string) string {
	if len(conds) == 0 {
		return "true"
	}
	return strings.Join(conds, " && ")
}

// emitVector writes the vector chunk at j0: loads, 8 lanes, stores.
func (c *lanes) emitVector(w *writer) {
	for _, ld := range c.loads {
		w.line("float %s[8];", ld.arr)
		w.line("fz_ld8_%s(%s, %s);", dsuf(ld.dt), ld.arr, ld.ptr)
	}
	for _, st := range c.stores {
		w.line("float %s[8];", st.arr)
	}
	w.line("#pragma unroll")
	w.open("for (int u = 0; u < 8; u++) {")
	w.line("const i64 jj = j0 + u;")
	w.raw(c.body)
	w.close()
	for _, st := range c.stores {
		w.line("fz_st8_%s(%s, %s);", dsuf(st.dt), st.ptr, st.arr)
	}
}

// genLanes generates an element body. In a vector body, loads of values not
// computed by the kernel at [..., jj] from rows with a contiguous last axis
// become 8-lane vector loads, except inside a concat's part (evaluator.branch),
// into the registers of cache where it is not nil and has room.
func (k *kgen) genLanes(parent *scope, vector bool, hoist func(*ir.Value, []ix) *scope,
	leaf func(*evaluator, *ir.Value, []ix) (string, bool, error), body func(e *evaluator, s *sink) error, cache *rowCache) (*lanes, error) {
	var inner writer
	sc := newScope(&inner, parent)
	res := &lanes{}
	seen := map[string]int{}
	e := &evaluator{k: k, cur: sc}
	e.scopeOf = func(v *ir.Value, idx []ix) *scope {
		if !mentionsJ(idx) && hoist != nil {
			return hoist(v, idx)
		}
		return nil
	}
	e.leaf = func(e *evaluator, v *ir.Value, idx []ix) (string, bool, error) {
		if leaf != nil {
			if x, ok, err := leaf(e, v, idx); ok || err != nil {
				return x, ok, err
			}
		}
		m := len(idx)
		if !vector || e.branch > 0 || k.inKernel[v] || e.viewOfKernelValue(v) || m == 0 || idx[m-1].s != "jj" || mentionsJ(idx[:m-1]) || v.Def.Op == ir.OpConst {
			return "", false, nil
		}
		vw, err := k.viewOf(v)
		if err != nil || !vw.contiguousLast() {
			return "", false, err
		}
		at := append(append([]ix(nil), idx[:m-1]...), ixv("j0"))
		ptr, err := k.addr(v, at)
		if err != nil {
			return "", false, err
		}
		if cache != nil {
			if arr, first := cache.load(ptr, vw.dt); arr != "" {
				if first {
					res.cached = append(res.cached, vecLoad{arr: arr, ptr: ptr, dt: vw.dt})
				}
				return cache.ref(res, arr, vw.dt), true, nil
			}
		}
		i, ok := seen[ptr]
		if !ok {
			i = len(res.loads)
			seen[ptr] = i
			res.loads = append(res.loads, vecLoad{arr: k.fresh("vl"), ptr: ptr, dt: vw.dt})
		}
		return res.loads[i].arr + "[u]", true, nil
	}
	s := &sink{k: k, w: func() *writer { return e.cur.w }, vector: vector, seen: map[string]int{}}
	if err := body(e, s); err != nil {
		return nil, err
	}
	res.stores = s.stores
	res.body = strings.TrimRight(inner.String(), "\n")
	return res, nil
}

// elemLoop describes a block-wide loop over the positions jj in [0, n) of
// a row.
type elemLoop struct {
	k     *kgen
	n     ix
	vec   bool // try the 8-wide vector loop first
	hoist func(v *ir.Value, idx []ix) *scope
	leaf  func(e *evaluator, v *ir.Value, idx []ix) (string, bool, error)
	body  func(e *evaluator, jj ix, s *sink) error
	// cache, where it covers n, runs the vector part as its unrolled
	// steps over registers shared with the row's other passes.
	cache *rowCache
}

// emit writes the loop: a vector part over chunks of 8 positions when every
// contiguous access is aligned (checked at run time), then a scalar part.
// Values hoisted out of the body go to the parent scopes' writers, which
// must be emitted before w.
func (l *elemLoop) emit(w *writer, parent *scope) error {
	nt := l.k.nt
	jj := ixv("jj")
	body := func(e *evaluator, s *sink) error { return l.body(e, jj, s) }
	scalarStart := "threadIdx.x"
	if l.vec && l.cache.covers(l.n) {
		c, err := l.k.genLanes(parent, true, l.hoist, l.leaf, body, l.cache)
		if err != nil {
			return err
		}
		l.cache.require(c.alignment(true))
		l.cache.emit(w, c)
		scalarStart = l.cache.nv + " + threadIdx.x"
	} else if l.vec {
		c, err := l.k.genLanes(parent, true, l.hoist, l.leaf, body, nil)
		if err != nil {
			return err
		}
		nv := l.k.fresh("nv")
		w.line("const i64 %s = (%s) ? (%s & ~7LL) : 0;", nv, c.aligned(true), l.n)
		w.open("for (i64 j0 = (i64)threadIdx.x * 8; j0 < %s; j0 += %d) {", nv, nt*8)
		c.emitVector(w)
		w.close()
		scalarStart = nv + " + threadIdx.x"
	}
	c, err := l.k.genLanes(parent, false, l.hoist, l.leaf, body, nil)
	if err != nil {
		return err
	}
	w.open("for (i64 jj = %s; jj < %s; jj += %d) {", scalarStart, l.n, nt)
	w.raw(c.body)
	w.close()
	return nil
}

// atZero is a chunk pointer expression at chunk 0 (the row's start).
func atZero(ptr string) string {
	s := strings.ReplaceAll(ptr, " + j0)", ")")
	s = strings.ReplaceAll(s, " + j0", "")
	return strings.ReplaceAll(s, "j0", "0")
}

// storeAt writes val to row pointer base (of dtype dt, contiguous along jj)
// at position jj: an 8-lane vector store in a vector body.
func (s *sink) storeAt(base string, dt ir.DType, val string) {
	if s.vector {
		ptr := base + " + j0"
		i, ok := s.seen[ptr]
		if !ok {
			i = len(s.stores)
			s.seen[ptr] = i
			s.stores = append(s.stores, vecStore{arr: s.k.fresh("vo"), ptr: ptr, dt: dt})
		}
		s.w().line("%s[u] = %s;", s.stores[i].arr, val)
		return
	}
	s.w().line("fz_st_%s(%s + jj, %s);", dsuf(dt), base, val)
}
