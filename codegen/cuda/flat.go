package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// flatKernel generates an element-wise kernel (a Row kernel without
// reduction, or a Copy kernel) whose outputs share one shape: the threads
// of the whole grid stride over chunks of 8 positions along the last axis,
// each chunk vectorised when its rows are contiguous and aligned, with a
// scalar path for the row's tail and for any other access pattern.
// Positions past a ragged last axis's length are stored as 0.
func (k *kgen) flatKernel(outs []*ir.Value) (string, error) {
	shape := shapeOf(outs[0])
	for _, o := range outs {
		if err := checkDType(o); err != nil {
			return "", err
		}
	}
	r := len(shape) - 1
	if r < 0 {
		return "", fmt.Errorf("kernel %s: scalar outputs are not supported", k.pk.Name)
	}
	dom, last := shape[:r], ixp(shape[r])
	var w writer
	w.indent = 1
	rowIdx := k.openChunkLoop(&w, dom, last)
	at := func(jj ix) []ix { return append(append([]ix(nil), rowIdx...), jj) }
	valid := last
	var ragged *ir.Value
	for _, o := range outs {
		if o.Ragged != nil {
			ragged = o
		}
	}
	if ragged != nil {
		vl, err := k.validLen(ragged, at(ixc(0)))
		if err != nil {
			return "", err
		}
		if ragged.Ragged.Axis == r {
			w.line("const i64 vlen = fz_min64(%s, %s);", vl, last)
		} else {
			w.line("const i64 vlen = %s < %s ? %s : 0;", rowIdx[ragged.Ragged.Axis], vl, last)
		}
		valid = ixv("vlen")
	}
	rowScope := newScope(&w, nil)
	hoist := func(*ir.Value, []ix) *scope { return rowScope }
	body := func(e *evaluator, s *sink) error {
		for _, o := range outs {
			x, err := e.eval(o, at(ixv("jj")))
			if err != nil {
				return err
			}
			if err := s.store(o, at(ixv("jj")), x); err != nil {
				return err
			}
		}
		return nil
	}
	var zeroTail func(w *writer) error
	if ragged != nil {
		zeroTail = func(w *writer) error {
			w.open("if (jj >= %s) {", valid)
			for _, o := range outs {
				a, err := k.addr(o, at(ixv("jj")))
				if err != nil {
					return err
				}
				w.line("fz_st_%s(%s, 0.f);", dsuf(o.Type.DType), a)
			}
			w.line("continue;")
			w.close()
			return nil
		}
	}
	if err := k.emitChunk(&w, rowScope, hoist, body, valid, last, zeroTail); err != nil {
		return "", err
	}
	w.close()
	return w.String(), nil
}

// openChunkLoop opens the grid-stride loop of an element-wise kernel over
// chunks of 8 positions along the last axis (extent last) of the rows dom:
// chunk c is row c / nch, positions j0 .. j0 + 7. It returns the row's
// index along each axis of dom, named once.
func (k *kgen) openChunkLoop(w *writer, dom []poly, last ix) []ix {
	w.line("const i64 nch = %s;", ixDiv(ixAdd(last, ixc(7)), ixc(8)))
	w.line("const i64 total = %s * nch;", ixp(numel(dom)))
	w.open("for (i64 c = (i64)blockIdx.x * %d + threadIdx.x; c < total; c += (i64)gridDim.x * %d) {", k.nt, k.nt)
	w.line("const i64 row = c / nch;")
	w.line("const i64 j0 = (c - row * nch) * 8;")
	rowIdx := delin(ixv("row"), dom)
	for i := range rowIdx {
		if rowIdx[i].k {
			continue
		}
		name := fmt.Sprintf("ri%d", i)
		w.line("const i64 %s = %s;", name, rowIdx[i])
		rowIdx[i] = ixv(name)
	}
	return rowIdx
}

// emitChunk writes the body of one chunk at j0: vectorised when its 8
// positions lie below valid and every contiguous access is aligned, else
// position by position up to last, with pre (when not nil) writing code
// before each position's body. Row-invariant values are hoisted into
// rowScope, whose writer is w: both bodies are generated before the
// branches are written.
func (k *kgen) emitChunk(w *writer, rowScope *scope, hoist func(*ir.Value, []ix) *scope, body func(*evaluator, *sink) error, valid, last ix, pre func(*writer) error) error {
	vec, err := k.genLanes(rowScope, true, hoist, nil, body, nil)
	if err != nil {
		return err
	}
	sc, err := k.genLanes(rowScope, false, hoist, nil, body, nil)
	if err != nil {
		return err
	}
	w.open("if (j0 + 8 <= %s && %s) {", valid, vec.aligned(false))
	vec.emitVector(w)
	w.close("} else {")
	w.indent++
	w.line("#pragma unroll 1")
	w.open("for (int u = 0; u < 8; u++) {")
	w.line("const i64 jj = j0 + u;")
	w.line("if (jj >= %s) break;", last)
	if pre != nil {
		if err := pre(w); err != nil {
			return err
		}
	}
	w.raw(sc.body)
	w.close()
	w.close()
	return nil
}
