package plan

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// Layout is the order in which a kernel lays a value's axes out in its
// buffer, chosen by the layout pass so that the value's readers see it
// contiguously: the buffer holds the value transposed by the permutation,
// row-major (axis j of the buffer is the value's axis Layout[j]). A value
// without a Layout is stored row-major in its own axis order.
type Layout []int

// Stored is the shape of the buffer holding a value of shape s.
func (l Layout) Stored(s ir.Shape) ir.Shape {
	out := make(ir.Shape, len(l))
	for j, ax := range l {
		out[j] = s[ax]
	}
	return out
}

// String prints the permutation as "axes 0, 2, 1, 3".
func (l Layout) String() string {
	parts := make([]string, len(l))
	for i, ax := range l {
		parts[i] = fmt.Sprint(ax)
	}
	return "axes " + strings.Join(parts, ", ")
}

// check reports whether l is a permutation of rank axes.
func (l Layout) check(rank int) error {
	if len(l) != rank {
		return fmt.Errorf("layout %v of a rank-%d value", []int(l), rank)
	}
	seen := make([]bool, rank)
	for _, ax := range l {
		if ax < 0 || ax >= rank || seen[ax] {
			return fmt.Errorf("layout %v is not a permutation", []int(l))
		}
		seen[ax] = true
	}
	return nil
}

// Permute lays out data, a value of shape shape in row-major order, as a
// buffer of layout l holds it.
func (l Layout) Permute(data []float64, shape []int) ([]float64, error) {
	if err := l.check(len(shape)); err != nil {
		return nil, err
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	if n != len(data) {
		return nil, fmt.Errorf("%d elements for a shape %v", len(data), shape)
	}
	// stride[i] is the buffer stride of the value's axis i.
	stride := make([]int, len(shape))
	s := 1
	for j := len(l) - 1; j >= 0; j-- {
		stride[l[j]] = s
		s *= shape[l[j]]
	}
	out := make([]float64, n)
	idx := make([]int, len(shape))
	for _, x := range data {
		off := 0
		for a, v := range idx {
			off += v * stride[a]
		}
		out[off] = x
		for a := len(idx) - 1; a >= 0; a-- {
			if idx[a]++; idx[a] < shape[a] {
				break
			}
			idx[a] = 0
		}
	}
	return out, nil
}

// verifyLayouts checks that every stored layout permutes a value a kernel
// computes, neither a graph output (its layout is the caller's) nor a
// value in a KV cache.
func (p *Plan) verifyLayouts(written map[any]int) error {
	outputs := map[*ir.Value]bool{}
	for _, o := range p.Graph.Outputs {
		outputs[o] = true
	}
	for v, l := range p.Layouts {
		if _, ok := written[v]; !ok {
			return fmt.Errorf("a layout for %s, which no kernel computes", v.Ref())
		}
		if outputs[v] || InCache(v) {
			return fmt.Errorf("a layout for %s, whose layout is fixed", v.Ref())
		}
		if err := l.check(len(v.Type.Shape)); err != nil {
			return fmt.Errorf("%s: %w", v.Ref(), err)
		}
	}
	return nil
}
