package cuda

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// kgen generates one plan kernel.
type kgen struct {
	g  *ir.Graph
	pk *plan.Kernel
	// layouts are the plan's stored layouts: the kernel's stores and
	// reads of those values address their buffers through them.
	layouts map[*ir.Value]plan.Layout
	// params are the kernel's parameters in ABI order; names maps each
	// pointer's buffer to its canonical body name (p0, p1, ...).
	params []codegen.Param
	names  map[*ir.Value]string
	// written marks buffers the kernel writes.
	written  map[*ir.Value]bool
	inKernel map[*ir.Value]bool
	views    map[*ir.Value]*view
	// nt is the block size the entries are written for.
	nt  int
	tmp int
	// tables are module-level constant tables the body uses, by name.
	tables map[string]string
	// minBlocks is the blocks an SM must be able to hold (the entries'
	// launch bounds; 0: 1).
	minBlocks int
}

func newKgen(p *plan.Plan, pk *plan.Kernel, nt int) (*kgen, error) {
	g := p.Graph
	k := &kgen{g: g, pk: pk, layouts: p.Layouts, nt: nt, names: map[*ir.Value]string{}, written: map[*ir.Value]bool{},
		inKernel: map[*ir.Value]bool{}, views: map[*ir.Value]*view{}}
	for _, n := range pk.Nodes {
		for _, o := range n.Outs {
			k.inKernel[o] = true
		}
	}
	k.params = kernelParams(g, pk)
	for i, p := range k.params {
		if p.Value != nil {
			k.names[p.Value] = "p" + strconv.Itoa(i)
			if p.Written {
				k.written[p.Value] = true
			}
		}
	}
	for _, o := range pk.Outputs {
		k.written[codegen.Buffer(o)] = true
	}
	return k, nil
}

// kernelParams returns codegen.Params with the page-table and sequence
// length inputs the kernel reads added to its inputs when the plan did not
// list them (plan.Finish does not yet see layout inputs).
func kernelParams(g *ir.Graph, pk *plan.Kernel) []codegen.Param {
	extra := layoutInputs(pk)
	if len(extra) == 0 {
		return codegen.Params(g, pk)
	}
	have := map[*ir.Value]bool{}
	for _, v := range pk.Inputs {
		have[codegen.Buffer(v)] = true
	}
	c := *pk
	c.Inputs = append([]*ir.Value(nil), pk.Inputs...)
	for _, v := range extra {
		if !have[v] {
			have[v] = true
			c.Inputs = append(c.Inputs, v)
		}
	}
	return codegen.Params(g, &c)
}

// layoutInputs lists the i32 inputs describing paged or ragged caches and
// sequence lengths that the kernel's nodes need.
func layoutInputs(pk *plan.Kernel) []*ir.Value {
	var out []*ir.Value
	seen := map[*ir.Value]bool{}
	add := func(vs ...*ir.Value) {
		for _, v := range vs {
			if v != nil && !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	ragged := func(v *ir.Value) {
		if v.Ragged != nil && v.Ragged.Lens != nil {
			add(plan.Sources(v.Ragged.Lens)...)
		}
	}
	lay := func(l *ir.Layout) {
		if l != nil && l.Kind != ir.Contiguous {
			add(l.Indptr, l.Indices, l.Last)
		}
	}
	for _, n := range pk.Nodes {
		for _, a := range n.Args {
			ragged(a)
			for _, s := range plan.Sources(a) {
				ragged(s)
				if r := plan.Root(s); plan.InCache(r) {
					lay(r.Def.Args[0].Def.Attr.Layout)
				}
			}
		}
		for _, o := range n.Outs {
			ragged(o)
		}
		if n.Op == ir.OpAppend {
			lay(n.Args[0].Def.Attr.Layout)
			ragged(n.Args[0])
		}
	}
	return out
}

// name returns the body name of the parameter holding buffer v.
func (k *kgen) name(v *ir.Value) (string, error) {
	if n, ok := k.names[v]; ok {
		return n, nil
	}
	return "", fmt.Errorf("kernel %s: %s is not a parameter", k.pk.Name, v.Ref())
}

func (k *kgen) fresh(prefix string) string {
	k.tmp++
	return prefix + strconv.Itoa(k.tmp)
}

// signature is the C parameter list of the body functions.
func (k *kgen) signature(entry bool) string {
	var ps []string
	for i, p := range k.params {
		name := "p" + strconv.Itoa(i)
		if entry {
			name = p.Name
		}
		switch {
		case p.Map != nil && entry:
			ps = append(ps, "const __grid_constant__ fz_tmap "+name)
			continue
		case p.Map != nil:
			ps = append(ps, "const fz_tmap* __restrict__ "+name)
			continue
		case p.Value == nil:
			ps = append(ps, "i64 "+dimParam(p.Dim))
			continue
		}
		t := ctype(p.Value.Type.DType)
		if k.written[p.Value] {
			ps = append(ps, t+"* __restrict__ "+name)
		} else {
			ps = append(ps, "const "+t+"* __restrict__ "+name)
		}
	}
	return strings.Join(ps, ", ")
}

// args is the argument list an entry passes to its body.
func (k *kgen) args() string {
	var as []string
	for _, p := range k.params {
		if p.Map != nil {
			as = append(as, "&"+p.Name)
		} else {
			as = append(as, p.Name)
		}
	}
	return strings.Join(as, ", ")
}

// apiParams are the parameters as Module reports them.
func (k *kgen) apiParams() []codegen.Param {
	ps := append([]codegen.Param(nil), k.params...)
	for i := range ps {
		if ps[i].Value != nil && k.written[ps[i].Value] {
			ps[i].Written = true
		}
	}
	return ps
}

// rowMap appends the tensor map parameter m to the kernel's parameters
// and returns its name in the body functions.
func (k *kgen) rowMap(m codegen.RowMap) string {
	k.params = append(k.params, codegen.Param{Name: "tmap" + strconv.Itoa(len(k.params)), Map: &m})
	return "p" + strconv.Itoa(len(k.params)-1)
}

// dimIx is a dim as an index expression.
func dimIx(d ir.Dim) ix { return ixp(polyOf(d)) }

// viewOf returns (and caches) the view of an external value.
func (k *kgen) viewOf(v *ir.Value) (*view, error) {
	if w, ok := k.views[v]; ok {
		return w, nil
	}
	w, err := viewOf(v, k.g, k.layouts)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.pk.Name, err)
	}
	k.views[v] = w
	return w, nil
}

// addr returns the C pointer expression of element idx of an external value.
func (k *kgen) addr(v *ir.Value, idx []ix) (string, error) {
	return k.addrAt(v, idx, nil)
}

// addrAt is addr with, for a paged cache's view, the page holding the
// element given as the expression page (the entry pageOf addresses, read
// earlier) in place of the page-table read; nil reads the table.
func (k *kgen) addrAt(v *ir.Value, idx []ix, page *ix) (string, error) {
	w, err := k.viewOf(v)
	if err != nil {
		return "", err
	}
	p, err := k.name(w.buf)
	if err != nil {
		return "", err
	}
	off, err := k.offset(w, idx, page)
	if err != nil {
		return "", err
	}
	if off.isConst(0) {
		return p, nil
	}
	return p + " + " + off.String(), nil
}

// pageOf is the page-table entry addr reads for element idx of v: the
// address of the index of the page holding it, for a view of a paged
// cache (ok false for any other value, whose address reads no table).
func (k *kgen) pageOf(v *ir.Value, idx []ix) (entry ix, ok bool, err error) {
	w, err := k.viewOf(v)
	if err != nil || w.cache == nil || w.cache.layout.Kind != ir.Paged {
		return ix{}, false, err
	}
	ci := w.cache.index(idx)
	indptr, err := k.name(w.cache.layout.Indptr)
	if err != nil {
		return ix{}, false, err
	}
	indices, err := k.name(w.cache.layout.Indices)
	if err != nil {
		return ix{}, false, err
	}
	return ixv(fmt.Sprintf("fz_paged_entry(%s, %s, %s, %s, %s)", indptr, indices, ci[0], ci[2], ixc(w.cache.layout.Page))), true, nil
}

// offset is the element offset of idx in a view's buffer, through the page
// table for paged and ragged caches (page: see addrAt).
func (k *kgen) offset(w *view, idx []ix, page *ix) (ix, error) {
	if w.cache == nil {
		return w.offset(idx), nil
	}
	ci := w.cache.index(idx)
	row, err := k.cacheRowAt(w.cache.app, w.cache.c, ci[0], ci[1], ci[2], page)
	if err != nil {
		return ix{}, err
	}
	return ixAdd(row, ci[3]), nil
}

// cacheRow is the element offset of token t of (sequence b, kv head g) of
// the K (c = 0) or V (c = 1) cache written by append app.
func (k *kgen) cacheRow(app *ir.Node, c int, b, g, t ix) (ix, error) {
	return k.cacheRowAt(app, c, b, g, t, nil)
}

// cacheRowAt is cacheRow with a paged cache's page given (see addrAt).
func (k *kgen) cacheRowAt(app *ir.Node, c int, b, g, t ix, page *ix) (ix, error) {
	state := app.Args[0]
	ss := state.Type.Shape // [2, B, G, T, Dh]
	nb, ng, dh := dimIx(ss[1]), dimIx(ss[2]), dimIx(ss[4])
	lay := state.Def.Attr.Layout
	if lay == nil || lay.Kind == ir.Contiguous {
		tt := dimIx(app.Outs[0].Type.Shape[2])
		plane := ixMul(ixAdd(ixMul(ixAdd(ixMul(ixc(int64(c)), nb), b), ng), g), tt)
		return ixMul(ixAdd(plane, t), dh), nil
	}
	indptr, err := k.name(lay.Indptr)
	if err != nil {
		return ix{}, err
	}
	if lay.Kind == ir.RaggedLayout {
		return ixv(fmt.Sprintf("fz_ragged_row(%s, %s, %s, %s, %d, %s, %s, %s)", indptr, b, g, t, c, nb, ng, dh)), nil
	}
	if page != nil {
		return ixv(fmt.Sprintf("fz_paged_at(%s, %s, %s, %d, %s, %s, %s)", *page, g, t, c, ixc(lay.Page), ng, dh)), nil
	}
	indices, err := k.name(lay.Indices)
	if err != nil {
		return ix{}, err
	}
	return ixv(fmt.Sprintf("fz_paged_row(%s, %s, %s, %s, %s, %d, %s, %s, %s)", indptr, indices, b, g, t, c, ixc(lay.Page), ng, dh)), nil
}

// load is a scalar f32 load of element idx of an external value.
func (k *kgen) load(v *ir.Value, idx []ix) (string, error) {
	a, err := k.addr(v, idx)
	if err != nil {
		return "", err
	}
	w, _ := k.viewOf(v)
	return fmt.Sprintf("fz_ld_%s(%s)", dsuf(w.dt), a), nil
}

// seqLen is the number of existing positions along a ragged axis for the
// sequence whose index on the marker's batch axis is b.
func (k *kgen) seqLen(r *ir.Ragged, b ix) (ix, error) {
	lens := r.Lens.Def
	if lens.Op != ir.OpSeqLens {
		return ix{}, fmt.Errorf("ragged lengths %s are not a layout's", r.Lens.Ref())
	}
	indptr, err := k.name(plan.Root(lens.Args[0]))
	if err != nil {
		return ix{}, err
	}
	var n ix
	if len(lens.Args) == 2 {
		last, err := k.name(plan.Root(lens.Args[1]))
		if err != nil {
			return ix{}, err
		}
		n = ixv(fmt.Sprintf("fz_seqlen_paged(%s, %s, %s, %s)", indptr, last, b, ixc(int64(lens.Attr.Num))))
	} else {
		n = ixv(fmt.Sprintf("fz_seqlen_ragged(%s, %s)", indptr, b))
	}
	if r.Less != nil {
		// A cache before an append of packed tokens: each sequence's
		// tokens fewer.
		less, err := k.name(r.Less)
		if err != nil {
			return ix{}, err
		}
		n = ixSub(n, ixv(fmt.Sprintf("fz_seqlen_ragged(%s, %s)", less, b)))
	}
	return ixAdd(n, dimIx(r.Extra)), nil
}

// validLen is the existing length along the ragged axis of v at index idx
// (the index along the marker's batch axis picks the sequence: where that
// axis is v's packed token axis, the token's own).
func (k *kgen) validLen(v *ir.Value, idx []ix) (ix, error) {
	r := v.Ragged
	b := ixc(0)
	if r.Batch >= 0 {
		b = idx[r.Batch]
		if p := v.Packed; p != nil && p.Axis == r.Batch {
			var err error
			if b, err = k.packedSeq(p, b); err != nil {
				return ix{}, err
			}
		}
	}
	return k.seqLen(r, b)
}

// delin splits a linear index over a shape (outermost first) into indices.
func delin(lin ix, shape []poly) []ix {
	out := make([]ix, len(shape))
	rem := lin
	for i := len(shape) - 1; i >= 0; i-- {
		if i == 0 {
			out[i] = rem
			break
		}
		out[i] = ixMod(rem, ixp(shape[i]))
		rem = ixDiv(rem, ixp(shape[i]))
	}
	return out
}

// linear is the row-major linear index of idx over shape.
func linear(idx []ix, shape []poly) ix {
	l := ixc(0)
	for i := range shape {
		l = ixAdd(ixMul(l, ixp(shape[i])), idx[i])
	}
	return l
}

// numel is the element count of a shape.
func numel(shape []poly) poly {
	n := pconst(1)
	for _, s := range shape {
		n = n.mul(s)
	}
	return n
}
