package interp

import (
	"cmp"
	"math"
	"slices"

	"github.com/fuser-dev/fuser/ir"
)

// reduce computes sum, max or mean over Attr.Axis, keeping the axis with
// size 1. Non-existing positions of a ragged argument are skipped: over no
// position the sum is 0, the max -Inf and the mean 0; mean divides by the
// number of existing positions.
func (m *machine) reduce(n *ir.Node, x *Tensor) (*Tensor, error) {
	ax := n.Attr.Axis
	vd, err := m.validity(n.Args[0], x.Shape)
	if err != nil {
		return nil, err
	}
	outShape := append([]int(nil), x.Shape...)
	outShape[ax] = 1
	out := New(outShape...)
	outer, size, inner := around(x.Shape, ax)
	for o := range outer {
		for i := range inner {
			acc, count := 0.0, 0
			if n.Op == ir.OpReduceMax {
				acc = math.Inf(-1)
			}
			for j := range size {
				off := (o*size+j)*inner + i
				if !vd.ok(off) {
					continue
				}
				v := x.Data[off]
				if n.Op == ir.OpReduceMax {
					acc = math.Max(acc, v)
				} else {
					acc += v
				}
				count++
			}
			if n.Op == ir.OpMean {
				if count > 0 {
					acc /= float64(count)
				}
			}
			out.Data[o*inner+i] = acc
		}
	}
	return out, nil
}

// lines calls f for every line of x along axis with the offsets of its
// existing elements, in order; buf is reused between lines.
func lines(x *Tensor, axis int, vd *validity, f func(offs []int)) {
	outer, size, inner := around(x.Shape, axis)
	buf := make([]int, 0, size)
	for o := range outer {
		for i := range inner {
			buf = buf[:0]
			for j := range size {
				if off := (o*size+j)*inner + i; vd.ok(off) {
					buf = append(buf, off)
				}
			}
			f(buf)
		}
	}
}

// softmax computes exp(x - max) / sum(exp(x - max)) along Attr.Axis over the
// existing positions; -Inf entries give 0, and a line whose entries are all
// -Inf (or that has no existing position) gives 0 everywhere.
func (m *machine) softmax(n *ir.Node, x *Tensor) (*Tensor, error) {
	vd, err := m.validity(n.Args[0], x.Shape)
	if err != nil {
		return nil, err
	}
	out := New(x.Shape...)
	lines(x, n.Attr.Axis, vd, func(offs []int) {
		mx := math.Inf(-1)
		for _, off := range offs {
			mx = math.Max(mx, x.Data[off])
		}
		if math.IsInf(mx, -1) {
			return // all masked: the line stays 0
		}
		sum := 0.0
		for _, off := range offs {
			e := math.Exp(x.Data[off] - mx)
			out.Data[off] = e
			sum += e
		}
		for _, off := range offs {
			out.Data[off] /= sum
		}
	})
	return out, nil
}

// topk keeps the Attr.K largest existing entries of each line along
// Attr.Axis (ties: the lower index first) and sets the others to -Inf.
func (m *machine) topk(n *ir.Node, x *Tensor) (*Tensor, error) {
	vd, err := m.validity(n.Args[0], x.Shape)
	if err != nil {
		return nil, err
	}
	out := New(x.Shape...)
	for i := range out.Data {
		out.Data[i] = math.Inf(-1)
	}
	k := n.Attr.K
	var order []int
	lines(x, n.Attr.Axis, vd, func(offs []int) {
		order = append(order[:0], offs...)
		// Offsets grow with the index along the axis, so they break ties.
		slices.SortFunc(order, func(a, b int) int {
			if c := cmp.Compare(x.Data[b], x.Data[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		for _, off := range order[:min(k, len(order))] {
			out.Data[off] = x.Data[off]
		}
	})
	return out, nil
}
