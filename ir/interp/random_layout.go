package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// layoutState generates a paged or ragged state and its layout inputs.
// States sharing a layout's indptr input share its sequence lengths.
func (gen *generator) layoutState(v *ir.Value) error {
	l := v.Def.Attr.Layout
	B, T, S, err := stateExtents(gen.g, v, gen.dims)
	if err != nil {
		return err
	}
	shape, err := v.Type.Shape.Eval(gen.dims)
	if err != nil {
		return err
	}
	G, Dh := shape[2], shape[4]
	lens := gen.sharedLens(l)
	if lens == nil {
		lens = make([]int, B)
		for b := range lens {
			switch {
			case T == 0:
			case b == 0:
				lens[b] = T
			default:
				lens[b] = 1 + gen.rng.IntN(T)
			}
		}
	}
	gen.lens[v] = lens
	switch l.Kind {
	case ir.Paged:
		return gen.pagedState(v, lens, S, G, Dh)
	case ir.RaggedLayout:
		indptr := make([]int, B+1)
		for b, n := range lens {
			indptr[b+1] = indptr[b] + n
		}
		if err := gen.putLayout(l.Indptr, intTensor(indptr)); err != nil {
			return err
		}
		gen.out[v.Name] = gen.uniform([]int{2, G, indptr[B], Dh}, -1, 1, v.Type.DType)
	}
	return nil
}

// sharedLens returns the lengths of an earlier state with the same indptr.
func (gen *generator) sharedLens(l *ir.Layout) []int {
	for w, lens := range gen.lens {
		if w.Def.Attr.Layout.Indptr == l.Indptr {
			return lens
		}
	}
	return nil
}

// pagedState builds a page table for lens with room for S more tokens per
// sequence and a random pool.
func (gen *generator) pagedState(v *ir.Value, lens []int, S, G, Dh int) error {
	l := v.Def.Attr.Layout
	page := int(l.Page)
	pool, err := l.Pages.Eval(gen.dims)
	if err != nil {
		return fmt.Errorf("page pool size: %w", err)
	}
	nIdx, err := l.Indices.Type.Shape[0].Eval(gen.dims)
	if err != nil {
		return fmt.Errorf("page index count: %w", err)
	}
	if old := gen.out[l.Indices.Name]; old != nil && gen.out[l.Indptr.Name] != nil && gen.out[l.Last.Name] != nil {
		// Another state shares this page table: check it has room here too.
		p, err := NewPageTable(page, gen.out[l.Indptr.Name], old, gen.out[l.Last.Name])
		if err != nil {
			return err
		}
		if err := p.Check(int(pool)); err != nil {
			return fmt.Errorf("shared page table: %w", err)
		}
		if _, err := p.Append(S); err != nil {
			return fmt.Errorf("shared page table: %w", err)
		}
		if !equalInts(p.Lens(), lens) {
			return fmt.Errorf("shares its page table with a state of another page size")
		}
		gen.out[v.Name] = gen.uniform([]int{int(pool), 2, G, page, Dh}, -1, 1, v.Type.DType)
		return nil
	}
	p := &PageTable{Page: page, Indptr: make([]int, len(lens)+1), Last: make([]int, len(lens))}
	for b, n := range lens {
		np := (n + page - 1) / page
		p.Indptr[b+1] = p.Indptr[b] + np
		if np > 0 {
			p.Last[b] = n - (np-1)*page
		}
	}
	_, _, spare := p.spare(S)
	need := p.Indptr[len(lens)] + spare
	if int(nIdx) < need {
		return fmt.Errorf("%d page indices (%s) cannot hold these sequences and %d appended tokens: they need %d", nIdx, l.Indices.Name, S, need)
	}
	if int(pool) < need {
		return fmt.Errorf("a pool of %d pages cannot hold these sequences and %d appended tokens: they need %d pages", pool, S, need)
	}
	perm := gen.rng.Perm(int(pool))
	p.Indices = make([]int, nIdx)
	for i := range p.Indices {
		if len(perm) > 0 {
			p.Indices[i] = perm[i%len(perm)]
		}
	}
	indptr, indices, last := p.Tensors()
	for _, x := range []struct {
		v *ir.Value
		t *Tensor
	}{{l.Indptr, indptr}, {l.Indices, indices}, {l.Last, last}} {
		if err := gen.putLayout(x.v, x.t); err != nil {
			return err
		}
	}
	gen.out[v.Name] = gen.uniform([]int{int(pool), 2, G, page, Dh}, -1, 1, v.Type.DType)
	return nil
}

// putLayout stores a layout input, which must agree with any earlier state
// sharing it.
func (gen *generator) putLayout(v *ir.Value, t *Tensor) error {
	if old := gen.out[v.Name]; old != nil {
		if !old.SameShape(t.Shape) || !equalFloats(old.Data, t.Data) {
			return fmt.Errorf("layout input %s is shared by states with different layouts", v.Name)
		}
		return nil
	}
	gen.out[v.Name] = t
	return nil
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
