package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// stateStore is a state leaf: its physical tensor, its layout and, once
// appended to, the physical tensor after the step.
type stateStore struct {
	layout      *ir.Layout // nil for a contiguous state
	phys, after *Tensor
	// B, G, T, Dh are the extents of the logical [2, B, G, T, Dh] view.
	B, G, T, Dh int
	// S is the number of tokens the step appends to each sequence of the
	// state (0 when no append writes it); packed, when set, are the
	// sequences of packed tokens appended instead, qlen(b) to sequence b.
	S      int
	packed *packedSeqs
	// lens are the tokens per sequence the layout describes, after the
	// step's append (nil for a contiguous state); cached are the tokens
	// before it, lens - S: the state's logical view (nil: T for every
	// sequence).
	lens, cached []int
	table        *PageTable // paged layout
	indptr       []int      // ragged layout
}

// loadState checks a state leaf and stores its logical view.
func (m *machine) loadState(v *ir.Value, t *Tensor) error {
	decl, err := m.shape(v)
	if err != nil {
		return err
	}
	st := &stateStore{layout: v.Def.Attr.Layout}
	m.states[v] = st
	if len(decl) == 5 {
		st.B, st.G, st.T, st.Dh = decl[1], decl[2], decl[3], decl[4]
	}
	if st.layout == nil || st.layout.Kind == ir.Contiguous {
		st.layout = nil
		if err := checkTensor(t, decl); err != nil {
			return err
		}
		st.phys = m.rounded(t, v.Type.DType)
		m.vals[v] = st.phys
		return nil
	}
	if len(decl) != 5 || decl[0] != 2 {
		return fmt.Errorf("a %s state must be declared [2, B, G, T, Dh], got %s", st.layout.Kind, v.Type.Shape)
	}
	indptrT, err := m.arg(st.layout.Indptr)
	if err != nil {
		return err
	}
	var phys []int
	switch st.layout.Kind {
	case ir.Paged:
		indices, err := m.arg(st.layout.Indices)
		if err != nil {
			return err
		}
		last, err := m.arg(st.layout.Last)
		if err != nil {
			return err
		}
		pool, err := m.dim(st.layout.Pages)
		if err != nil {
			return fmt.Errorf("page pool size: %w", err)
		}
		if st.table, err = NewPageTable(int(st.layout.Page), indptrT, indices, last); err != nil {
			return err
		}
		if err := st.table.Check(pool); err != nil {
			return err
		}
		st.lens = st.table.Lens()
		phys = []int{pool, 2, st.G, st.table.Page, st.Dh}
	case ir.RaggedLayout:
		if st.indptr, err = ints(indptrT, "indptr"); err != nil {
			return err
		}
		if st.lens, err = raggedLens(st.indptr); err != nil {
			return err
		}
		phys = []int{2, st.G, st.indptr[len(st.indptr)-1], st.Dh}
	default:
		return fmt.Errorf("unknown layout %s", st.layout.Kind)
	}
	if len(st.lens) != st.B {
		return fmt.Errorf("the layout describes %d sequences, the state has batch %d", len(st.lens), st.B)
	}
	// The layout describes the cache after the step: its lengths count the
	// S tokens the step appends, which the cache before the step lacks.
	if ap := m.g.AppendOf(v); ap != nil {
		k, err := m.shape(ap.Args[1])
		if err != nil {
			return err
		}
		switch p := ap.Args[1].Packed; {
		case p != nil && len(k) == 3:
			if st.packed, err = m.packedOf(p, k[1]); err != nil {
				return err
			}
			if len(st.packed.indptr)-1 != st.B {
				return fmt.Errorf("%s packs %d sequences, the state has batch %d", p.Indptr.Name, len(st.packed.indptr)-1, st.B)
			}
		case len(k) == 4:
			st.S = k[2]
		}
	}
	st.cached = make([]int, st.B)
	for b, l := range st.lens {
		s := st.S
		if st.packed != nil {
			s = st.packed.qlen(b)
		}
		if l < s {
			return fmt.Errorf("sequence %d holds %d tokens after the step, fewer than the %d it appends: the %s layout describes the cache after the append", b, l, s, st.layout.Kind)
		}
		if st.cached[b] = l - s; st.cached[b] > st.T {
			return fmt.Errorf("sequence %d holds %d cached tokens before the step (%d after appending %d), more than T = %d", b, st.cached[b], l, s, st.T)
		}
	}
	if err := checkTensor(t, phys); err != nil {
		return fmt.Errorf("physical %s layout: %w", st.layout.Kind, err)
	}
	st.phys = m.rounded(t, v.Type.DType)
	m.vals[v] = st.logical()
	if r := v.Ragged; r != nil && r.Axis == 3 && r.Batch == 1 {
		// The state's own view holds the cached tokens only; its lens value
		// counts the appended ones too.
		sh := []int{2, st.B, st.G, st.T, st.Dh}
		str := strides(sh)
		m.valids[v] = &validity{axisStride: str[3], axisSize: st.T, batchStride: str[1], batchSize: st.B, lim: st.cached}
	}
	return nil
}

// raggedLens checks a ragged layout's indptr and returns the lengths.
func raggedLens(indptr []int) ([]int, error) {
	if len(indptr) < 1 || indptr[0] != 0 {
		return nil, fmt.Errorf("ragged layout indptr %v must start at 0", indptr)
	}
	lens := make([]int, len(indptr)-1)
	for b := range lens {
		if lens[b] = indptr[b+1] - indptr[b]; lens[b] < 0 {
			return nil, fmt.Errorf("ragged layout indptr is not monotone: indptr[%d] = %d > indptr[%d] = %d", b, indptr[b], b+1, indptr[b+1])
		}
	}
	return lens, nil
}

// row returns the offset in the physical tensor of the Dh values of
// component c (0: K, 1: V) of token t < lens[b] of sequence b, kv head g.
func (st *stateStore) row(c, b, g, t int) int {
	switch {
	case st.table != nil:
		p := st.table
		pg := p.Indices[p.Indptr[b]+t/p.Page]
		return (((pg*2+c)*st.G+g)*p.Page + t%p.Page) * st.Dh
	case st.indptr != nil:
		n := st.indptr[len(st.indptr)-1]
		return ((c*st.G+g)*n + st.indptr[b] + t) * st.Dh
	}
	return (((c*st.B+b)*st.G+g)*st.T + t) * st.Dh
}

// logical materialises the [2, B, G, T, Dh] view of a paged or ragged
// state before the step: each sequence's cached tokens, zero past them.
func (st *stateStore) logical() *Tensor {
	out := New(2, st.B, st.G, st.T, st.Dh)
	for c := range 2 {
		for b := range st.B {
			for g := range st.G {
				for t := range st.cached[b] {
					dst := (((c*st.B+b)*st.G+g)*st.T + t) * st.Dh
					src := st.row(c, b, g, t)
					copy(out.Data[dst:dst+st.Dh], st.phys.Data[src:src+st.Dh])
				}
			}
		}
	}
	return out
}

// seqLensNode computes the sequence lengths of a paged layout (indptr, last;
// Attr.Num is the page size) or of a ragged one (indptr).
func (m *machine) seqLensNode(n *ir.Node, args []*Tensor) (*Tensor, error) {
	indptr, err := ints(args[0], "indptr")
	if err != nil {
		return nil, err
	}
	var lens []int
	if len(args) == 2 {
		last, err := ints(args[1], "last")
		if err != nil {
			return nil, err
		}
		p := &PageTable{Page: int(n.Attr.Num), Indptr: indptr, Last: last}
		if err := p.checkLens(); err != nil {
			return nil, err
		}
		lens = p.Lens()
	} else if lens, err = raggedLens(indptr); err != nil {
		return nil, err
	}
	return intTensor(lens), nil
}
