package interp

import (
	"fmt"
	"math"
)

// PageTable is a paged KV-cache layout in FlashInfer's convention: it
// describes each sequence's cache after this step's append. Sequence b owns
// the pages Indices[Indptr[b]:Indptr[b+1]] in order, and its last page holds
// Last[b] tokens, so it holds Len(b) = (Indptr[b+1]-Indptr[b]-1)*Page +
// Last[b] tokens (0 when it has no page), counting the tokens the step
// appends: token t lives in page Indices[Indptr[b]+t/Page] at slot t%Page.
// Entries of Indices past Indptr[B] are not used.
type PageTable struct {
	Page                  int
	Indptr, Indices, Last []int
}

// NewPageTable reads a page table from its i32 tensors.
func NewPageTable(page int, indptr, indices, last *Tensor) (*PageTable, error) {
	p := &PageTable{Page: page}
	var err error
	if p.Indptr, err = ints(indptr, "indptr"); err != nil {
		return nil, err
	}
	if p.Indices, err = ints(indices, "indices"); err != nil {
		return nil, err
	}
	if p.Last, err = ints(last, "last"); err != nil {
		return nil, err
	}
	return p, nil
}

// Tensors returns the table as i32 tensors indptr [B+1], indices [N] and
// last [B].
func (p *PageTable) Tensors() (indptr, indices, last *Tensor) {
	return intTensor(p.Indptr), intTensor(p.Indices), intTensor(p.Last)
}

// Batch returns the number of sequences.
func (p *PageTable) Batch() int { return len(p.Indptr) - 1 }

// Pages returns the number of pages sequence b owns.
func (p *PageTable) Pages(b int) int { return p.Indptr[b+1] - p.Indptr[b] }

// Len returns the number of tokens of sequence b.
func (p *PageTable) Len(b int) int {
	if p.Pages(b) == 0 {
		return 0
	}
	return (p.Pages(b)-1)*p.Page + p.Last[b]
}

// Lens returns the number of tokens of every sequence.
func (p *PageTable) Lens() []int {
	out := make([]int, p.Batch())
	for b := range out {
		out[b] = p.Len(b)
	}
	return out
}

// Check validates the table for a pool of pool pages: indptr starts at 0 and
// never decreases, the sequences' pages exist in Indices and lie in the
// pool, and every last-page length is in [1, Page] (0 for a sequence with
// no page).
func (p *PageTable) Check(pool int) error {
	if err := p.checkLens(); err != nil {
		return err
	}
	if n := p.Indptr[p.Batch()]; n > len(p.Indices) {
		return fmt.Errorf("page table indptr ends at %d but there are %d page indices", n, len(p.Indices))
	}
	for i, pg := range p.Indices[:p.Indptr[p.Batch()]] {
		if pg < 0 || pg >= pool {
			return fmt.Errorf("page index %d (entry %d) is out of the pool [0, %d)", pg, i, pool)
		}
	}
	return nil
}

// checkLens validates what the sequence lengths depend on: Page, Indptr and
// Last.
func (p *PageTable) checkLens() error {
	if p.Page < 1 {
		return fmt.Errorf("page size %d is not positive", p.Page)
	}
	if len(p.Indptr) < 1 || p.Indptr[0] != 0 {
		return fmt.Errorf("page table indptr %v must start at 0", p.Indptr)
	}
	if len(p.Last) != p.Batch() {
		return fmt.Errorf("page table has %d last-page lengths for %d sequences", len(p.Last), p.Batch())
	}
	for b := range p.Batch() {
		if p.Indptr[b+1] < p.Indptr[b] {
			return fmt.Errorf("page table indptr is not monotone: indptr[%d] = %d > indptr[%d] = %d", b, p.Indptr[b], b+1, p.Indptr[b+1])
		}
	}
	for b, l := range p.Last {
		switch {
		case p.Pages(b) == 0 && l != 0:
			return fmt.Errorf("sequence %d has no page but last-page length %d", b, l)
		case p.Pages(b) > 0 && (l < 1 || l > p.Page):
			return fmt.Errorf("last-page length %d of sequence %d is out of range [1, %d]", l, b, p.Page)
		}
	}
	return nil
}

// slot returns the page and slot of token t < Len(b) of sequence b. It
// assumes a checked table.
func (p *PageTable) slot(b, t int) (page, slot int) {
	return p.Indices[p.Indptr[b]+t/p.Page], t % p.Page
}

// ints reads an i32 tensor as ints.
func ints(t *Tensor, what string) ([]int, error) {
	out := make([]int, len(t.Data))
	for i, x := range t.Data {
		if x != math.Trunc(x) || x < math.MinInt32 || x > math.MaxInt32 {
			return nil, fmt.Errorf("%s[%d] = %g is not an i32", what, i, x)
		}
		out[i] = int(x)
	}
	return out, nil
}

// intTensor returns a 1-D tensor holding xs.
func intTensor(xs []int) *Tensor {
	t := New(len(xs))
	for i, x := range xs {
		t.Data[i] = float64(x)
	}
	return t
}
