package cuda

import (
	"fmt"
	"slices"

	"github.com/fuser-dev/fuser/ir"
)

// rowCacheRegs bounds the registers a thread gives to a row kernel's
// cached chunks: 4 a step for a chunk of 16-bit elements (kept packed,
// unpacked where a pass reads it), 8 for the other dtypes (kept as floats).
const rowCacheRegs = 48

// rowCacheBlocks is the blocks an SM must hold of a row kernel that caches
// chunks (its launch bounds: 64 registers a thread): on an H100, at 4096
// and 8192 rows of bench/specs/add_rmsnorm.fu, 4 blocks (61 registers)
// measured 4-5% faster than no bound (74). 5 blocks (48 registers) measured
// 1% faster than 4 there but spilled in Gemma-2's larger row kernels
// (bench/results/2026-12-06-rows, rounds 1 and 3).
const rowCacheBlocks = 4

// rowCacheSteps bounds the unrolled steps of a cached row: a row of up to
// rowCacheSteps × 8 × block size positions.
const rowCacheSteps = 8

// rowCache holds a row kernel's vector chunks in registers across its
// passes. Where a row's length n is a constant of at most rowCacheSteps
// block-wide steps of 8 positions, every pass over it runs the same
// unrolled steps (thread t's chunks start at 8t + step·8·nt), so that a
// thread's loads of a step are issued together and a chunk that the
// statistics pass loaded (x in x · rsqrt(mean(x²))) is read from the
// registers by the passes after it instead of from memory again. The
// passes share one vector bound, taken under the alignment of every pass's
// accesses, so that a chunk a later pass reads from the registers was
// loaded by the first.
type rowCache struct {
	k     *kgen
	n     int64
	steps int
	nv    string
	conds []string
	arrs  map[string]string
	decls []vecLoad
	left  int
}

// newRowCache returns the cache of a row of n positions, or nil where n
// is not a known constant or the row takes more steps than rowCacheSteps.
func newRowCache(k *kgen, n ix) *rowCache {
	if !n.k || n.n < 8 {
		return nil
	}
	steps := int((n.n&^7 + int64(k.nt)*8 - 1) / (int64(k.nt) * 8))
	if steps > rowCacheSteps {
		return nil
	}
	return &rowCache{k: k, n: n.n, steps: steps, nv: k.fresh("nvr"), arrs: map[string]string{}, left: rowCacheRegs}
}

// covers reports whether a loop of n positions runs the cache's steps.
func (c *rowCache) covers(n ix) bool { return c != nil && n.k && n.n == c.n }

// packed reports whether chunks of dt are kept as their 16 bytes.
func packed(dt ir.DType) bool { return dt == ir.BF16 || dt == ir.F16 }

// load returns the register array of the chunk at ptr (dtype dt) and
// whether this pass must load it; "" when the budget is spent.
func (c *rowCache) load(ptr string, dt ir.DType) (arr string, first bool) {
	if a, ok := c.arrs[ptr]; ok {
		return a, false
	}
	regs := 8 * c.steps
	if packed(dt) {
		regs = 4 * c.steps
	}
	if c.left < regs {
		return "", false
	}
	c.left -= regs
	a := c.k.fresh("vr")
	c.arrs[ptr] = a
	c.decls = append(c.decls, vecLoad{arr: a, ptr: ptr, dt: dt})
	return a, true
}

// require adds a pass's alignment conditions to the shared vector bound.
func (c *rowCache) require(conds []string) {
	for _, x := range conds {
		if !slices.Contains(c.conds, x) {
			c.conds = append(c.conds, x)
		}
	}
}

// declare writes the shared vector bound and the register arrays; w must
// come before the first pass.
func (c *rowCache) declare(w *writer) {
	w.line("const i64 %s = (%s) ? %d : 0;", c.nv, allOf(c.conds), c.n&^7)
	for _, d := range c.decls {
		if packed(d.dt) {
			w.line("uint4 %s[%d];", d.arr, c.steps)
		} else {
			w.line("float %s[%d][8];", d.arr, c.steps)
		}
	}
}

// emit writes one pass's vector steps: chunk loads, the 8 lanes, the
// chunk stores, under the shared bound.
func (c *rowCache) emit(w *writer, l *lanes) {
	w.line("#pragma unroll")
	w.open("for (int it = 0; it < %d; it++) {", c.steps)
	w.line("const i64 j0 = (i64)threadIdx.x * 8 + it * %d;", c.k.nt*8)
	w.open("if (j0 < %s) {", c.nv)
	for _, ld := range l.cached {
		if packed(ld.dt) {
			w.line("%s[it] = *(const uint4*)(%s);", ld.arr, ld.ptr)
		} else {
			w.line("fz_ld8_%s(%s[it], %s);", dsuf(ld.dt), ld.arr, ld.ptr)
		}
	}
	for _, u := range l.unpacks {
		w.line("float %s[8];", u.local)
		w.line("fz_unpack_%s(%s, %s[it]);", dsuf(u.dt), u.local, u.arr)
	}
	l.emitVector(w)
	w.close()
	w.close()
}

// ref is the lane expression of position u of the cached chunk arr (dtype
// dt) in the body l: a packed chunk is unpacked once a step into a local
// array of l (l.unpacks).
func (c *rowCache) ref(l *lanes, arr string, dt ir.DType) string {
	if !packed(dt) {
		return fmt.Sprintf("%s[it][u]", arr)
	}
	for _, u := range l.unpacks {
		if u.arr == arr {
			return u.local + "[u]"
		}
	}
	u := unpack{arr: arr, local: c.k.fresh("vu"), dt: dt}
	l.unpacks = append(l.unpacks, u)
	return u.local + "[u]"
}
