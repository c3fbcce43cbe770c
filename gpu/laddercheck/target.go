package laddercheck

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/specs"
	"github.com/fuser-dev/fuser/specs/testlayers"
)

// Target is one layer whose ladder the check drives: the graph, the dims
// its package is generated for (B the largest batch), the buckets its
// ladder captures, and its steps: every batch of Batches at every context.
type Target struct {
	Graph   *ir.Graph
	Dims    map[string]int64
	Buckets []int
	Batches []int
	// Contexts are the ranges the sequences' lengths (after the append)
	// are drawn from, a paged cache's: one graph serves them all. Without
	// them every sequence holds T+S tokens, a contiguous cache's length.
	Contexts []Context
}

// Context is a range of sequence lengths, after the append.
type Context struct {
	Name     string
	Min, Max int
}

// Name is the target's layer and dims, as the check reports it.
func (t Target) Name() string {
	s := t.Graph.Name
	for _, d := range t.Graph.Dims {
		s += fmt.Sprintf(" %s=%d", d, t.Dims[d])
	}
	return s
}

// Targets are the ladders the check drives:
//
//   - Llama-3-8B at full size, decode at B=1, T=4096 (random bf16 weights):
//     its graph step must equal the eager step bit for bit in one launch;
//   - the shrunk paged_decode padding batches of 1, 3 and 5 sequences to
//     buckets 1, 4 and 8 at two context ranges through the same graphs:
//     pages of 16 tokens, at most T+S = 65 tokens (5 pages) a sequence, a
//     pool of 40 pages (the package allocates the scratch page, 40, past
//     it) and 48 page ids (5 pages of 8 sequences and a padded sequence's
//     one).
func Targets() ([]Target, error) {
	file, src, ok := specs.Source(specs.Default)
	if !ok {
		return nil, fmt.Errorf("no spec %s", specs.Default)
	}
	llama, err := frontend.Parse(file, src)
	if err != nil {
		return nil, err
	}
	paged, err := testlayers.Small("paged_decode")
	if err != nil {
		return nil, err
	}
	return []Target{
		{Graph: llama, Dims: map[string]int64{"B": 1, "S": 1, "T": 4096}, Buckets: []int{1}, Batches: []int{1}},
		{
			Graph: paged, Dims: map[string]int64{"B": 8, "S": 1, "T": 64, "P": 40, "N": 48},
			Buckets: []int{1, 4, 8}, Batches: []int{1, 3, 5},
			Contexts: []Context{{"short context", 2, 35}, {"long context", 36, 65}},
		},
	}, nil
}

// SameDims reports whether dims are the target's.
func (t Target) SameDims(dims map[string]int64) bool {
	return maps.Equal(t.Dims, dims)
}

// check reports a target whose steps its ladder or layout cannot take:
// buckets not sorted in 1..B, no batch, a batch above the largest bucket,
// a padded batch over a cache that is not paged (whose unpadded step lays
// the cache out otherwise), a context outside S..T+S or longer than the
// pool holds.
func (t Target) check(l *Layout) error {
	b := int(t.Dims["B"])
	if len(t.Buckets) == 0 || !slices.IsSorted(t.Buckets) || t.Buckets[0] < 1 || t.Buckets[len(t.Buckets)-1] > b {
		return fmt.Errorf("%s: buckets %v, want them sorted in 1..%d", t.Name(), t.Buckets, b)
	}
	top := t.Buckets[len(t.Buckets)-1]
	if len(t.Batches) == 0 {
		return fmt.Errorf("%s: no batches", t.Name())
	}
	for _, n := range t.Batches {
		if n < 1 || n > top {
			return fmt.Errorf("%s: batch %d outside 1..%d (the largest bucket)", t.Name(), n, top)
		}
		if !slices.Contains(t.Buckets, n) && l.Pages == nil {
			return fmt.Errorf("%s: batch %d is padded, which the check compares with the unpadded step only over a paged cache", t.Name(), n)
		}
	}
	if len(t.Contexts) > 0 && l.Pages == nil {
		return fmt.Errorf("%s: contexts over a contiguous cache, whose sequences all hold T+S tokens", t.Name())
	}
	for _, c := range t.Contexts {
		if p := l.Pages; c.Min > c.Max || int64(c.Min) < p.NewTokens || int64(c.Max) > p.MaxLen {
			return fmt.Errorf("%s: %s: lengths %d..%d, want them in %d..%d (S..T+S)", t.Name(), c.Name, c.Min, c.Max, p.NewTokens, p.MaxLen)
		}
		pages := int64(slices.Max(t.Batches)) * ((int64(c.Max) + l.Pages.Page - 1) / l.Pages.Page)
		if pages > l.Pages.Pages {
			return fmt.Errorf("%s: %s: %d pages for the largest batch, the pool has %d", t.Name(), c.Name, pages, l.Pages.Pages)
		}
	}
	return nil
}
