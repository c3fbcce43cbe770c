package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// cachePos is the cache position of new token s of sequence b written by
// append app: T + s for a contiguous cache, len_b - S + s for a paged or
// ragged one (its lengths count this step's tokens).
func (k *kgen) cachePos(app *ir.Node, b, s ix) (ix, error) {
	state := app.Args[0]
	if r := state.Ragged; r != nil {
		n, err := k.seqLen(r, b)
		if err != nil {
			return ix{}, err
		}
		return ixAdd(n, s), nil
	}
	return ixAdd(dimIx(state.Type.Shape[3]), s), nil
}

// cacheRowPtr is the pointer to the Dh elements of new token (b, g, s) of
// the K (c = 0) or V (c = 1) cache written by app.
func (k *kgen) cacheRowPtr(app *ir.Node, c int, b, g, s ix) (string, error) {
	p, err := k.name(app.Args[0])
	if err != nil {
		return "", err
	}
	pos, err := k.cachePos(app, b, s)
	if err != nil {
		return "", err
	}
	row, err := k.cacheRow(app, c, b, g, pos)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("(%s + %s)", p, row), nil
}

// appendKernel generates an Append kernel: the new keys and values
// k, v [B, G, S, Dh] (or packed [G, N, Dh]) are copied into the cache, 8
// head-dim elements per thread and step, through the layout's addressing.
func (k *kgen) appendKernel() (string, error) {
	app := k.pk.Nodes[0]
	if app.Op != ir.OpAppend || len(k.pk.Nodes) != 1 {
		return "", fmt.Errorf("append kernel %s: unexpected ops", k.pk.Name)
	}
	ks := shapeOf(app.Args[1])
	dom, last := ks[:len(ks)-1], ixp(ks[len(ks)-1])
	var w writer
	w.indent = 1
	rowIdx := k.openChunkLoop(&w, dom, last)
	var dst [2]string
	for c := range 2 {
		ptr, _, err := k.newTokenRow(&w, app, c, append(append([]ix(nil), rowIdx...), ixc(0)))
		if err != nil {
			return "", err
		}
		dst[c] = fmt.Sprintf("dst%d", c)
		w.line("%s* const %s = %s;", ctype(app.Args[0].Type.DType), dst[c], ptr)
	}
	rowScope := newScope(&w, nil)
	hoist := func(*ir.Value, []ix) *scope { return rowScope }
	body := func(e *evaluator, s *sink) error {
		return k.appendBody(e, s, app, append(append([]ix(nil), rowIdx...), ixv("jj")), dst)
	}
	if err := k.emitChunk(&w, rowScope, hoist, body, last, last, nil); err != nil {
		return "", err
	}
	w.close()
	return w.String(), nil
}

// appendBody stores k and v at index idx ([b, g, s, d], or packed [g, n,
// d]) into the rows dst.
func (k *kgen) appendBody(e *evaluator, s *sink, app *ir.Node, idx []ix, dst [2]string) error {
	for c := range 2 {
		x, err := e.eval(app.Args[1+c], idx)
		if err != nil {
			return err
		}
		s.storeAt(dst[c], app.Args[0].Type.DType, x)
	}
	return nil
}
