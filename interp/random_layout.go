package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// layoutState generates a paged or ragged state and its layout inputs. The
// layout describes each sequence's cache after the step's append of S
// tokens: the lengths len_b lie in [S, T+S] (at least 1), the first one
// exactly T+S; S is qlen_b, sequence b's own, for packed tokens (and 0
// tokens then possible). States sharing a layout's indptr input share its lengths.
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
	adds, lo := make([]int, B), make([]int, B)
	for b := range adds {
		adds[b], lo[b] = S, max(S, 1)
	}
	if ap := gen.g.AppendOf(v); ap != nil && ap.Args[1].Packed != nil {
		q := gen.qlens[ap.Args[1].Packed.Indptr]
		if len(q) != B {
			return fmt.Errorf("its appended tokens are packed for %d sequences, its batch is %d", len(q), B)
		}
		copy(adds, q)
		copy(lo, q)
	}
	lens := gen.sharedLens(l)
	if lens == nil {
		lens = make([]int, B)
		for b := range lens {
			hi := T + adds[b]
			switch {
			case hi == 0:
			case b == 0 || gen.opt.FullLengths:
				lens[b] = hi
			default:
				lens[b] = lo[b] + gen.rng.IntN(hi-lo[b]+1)
			}
		}
	}
	for b, n := range lens {
		if n < adds[b] || n > T+adds[b] {
			return fmt.Errorf("shares its layout with a state whose sequence %d holds %d tokens; appending %d tokens to at most T = %d cached needs [%d, %d]", b, n, adds[b], T, adds[b], T+adds[b])
		}
	}
	gen.lens[v] = lens
	gen.appended[v] = adds
	switch l.Kind {
	case ir.Paged:
		return gen.pagedState(v, lens, G, Dh)
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

// pagedState builds a page table for the post-append lengths lens, its
// pages distinct and shuffled, and a random pool.
func (gen *generator) pagedState(v *ir.Value, lens []int, G, Dh int) error {
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
		// Another state shares this page table: check it fits here too.
		p, err := NewPageTable(page, gen.out[l.Indptr.Name], old, gen.out[l.Last.Name])
		if err != nil {
			return err
		}
		if err := p.Check(int(pool)); err != nil {
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
	need := p.Indptr[len(lens)]
	if int(nIdx) < need {
		return fmt.Errorf("%d page indices (%s) cannot hold these sequences after the append: they need %d", nIdx, l.Indices.Name, need)
	}
	if int(pool) < need {
		return fmt.Errorf("a pool of %d pages cannot hold these sequences after the append: they need %d pages", pool, need)
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
