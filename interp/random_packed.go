package interp

import (
	"fmt"
	"slices"

	"github.com/fuser-dev/fuser/ir"
)

// packedIndptr draws the indptr of packed input v once (inputs packed by
// one indptr share it): the N tokens of v's first axis split over the B
// sequences as RandomOptions.QLens says, or at random, the last sequence
// empty when B >= 2 and the one before it a single token when B >= 3 and
// N >= 1, so that every draw covers both edge cases.
func (gen *generator) packedIndptr(v *ir.Value) error {
	ip := v.Packed.Indptr
	shape, err := v.Type.Shape.Eval(gen.dims)
	if err != nil {
		return err
	}
	ipShape, err := ip.Type.Shape.Eval(gen.dims)
	if err != nil {
		return err
	}
	N, B := shape[0], ipShape[0]-1
	if B < 0 {
		return fmt.Errorf("indptr %s has no entry", ip.Name)
	}
	if q, ok := gen.qlens[ip]; ok {
		if sum(q) != N {
			return fmt.Errorf("packs %d tokens, but %s splits %d", N, ip.Name, sum(q))
		}
		return nil
	}
	if B == 0 {
		if N > 0 {
			return fmt.Errorf("%d tokens cannot be packed into no sequence", N)
		}
		gen.qlens[ip] = nil
		gen.out[ip.Name] = intTensor([]int{0})
		return nil
	}
	q, err := gen.packedSplit(ip.Name, N, B)
	if err != nil {
		return err
	}
	gen.qlens[ip] = q
	indptr := make([]int, B+1)
	for b, n := range q {
		indptr[b+1] = indptr[b] + n
	}
	gen.out[ip.Name] = intTensor(indptr)
	return nil
}

// packedSplit is the token count of each of the B sequences of the N
// tokens an indptr packs: RandomOptions.QLens's, checked, or drawn.
func (gen *generator) packedSplit(name string, N, B int) ([]int, error) {
	if q, ok := gen.opt.QLens[name]; ok {
		if len(q) != B || sum(q) != N || slices.Min(q) < 0 {
			return nil, fmt.Errorf("the split %v of %s is not %d counts of at least 0 summing to %d", q, name, B, N)
		}
		return q, nil
	}
	q := make([]int, B)
	rest, free := N, B
	if B >= 2 {
		free-- // the last sequence stays empty
	}
	if B >= 3 && N >= 1 {
		q[B-2] = 1
		rest--
		free--
	}
	// Cut the remaining tokens among the first free sequences.
	cuts := make([]int, free-1, free+1)
	for i := range cuts {
		cuts[i] = gen.rng.IntN(rest + 1)
	}
	cuts = append(cuts, 0, rest)
	slices.Sort(cuts)
	for b := range free {
		q[b] = cuts[b+1] - cuts[b]
	}
	return q, nil
}

// packedPositions fills the rope positions t [N] of tokens packed as p:
// token n of sequence b sits at c_b + n - indptr[b], c_b the tokens cached
// for b before the step.
func (gen *generator) packedPositions(t *Tensor, p *ir.Packed) error {
	q, ok := gen.qlens[p.Indptr]
	if !ok {
		return fmt.Errorf("indptr %s of the positions is not drawn", p.Indptr.Name)
	}
	n := 0
	for b, cnt := range q {
		c, err := gen.cached(b)
		if err != nil {
			return err
		}
		for i := range cnt {
			t.Data[n] = float64(c + i)
			n++
		}
	}
	return nil
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}
