package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// reshape reinterprets x with a new shape of the same element count.
func reshape(x *Tensor, out []int) (*Tensor, error) {
	if numElements(out) != len(x.Data) {
		return nil, fmt.Errorf("cannot reshape %v to %v", x.Shape, out)
	}
	t := New(out...)
	copy(t.Data, x.Data)
	return t, nil
}

// transpose permutes the axes of x: axis i of the result is axis perm[i].
func transpose(x *Tensor, perm []int) *Tensor {
	out := make([]int, len(perm))
	st := strides(x.Shape)
	pst := make([]int, len(perm))
	for i, ax := range perm {
		out[i] = x.Shape[ax]
		pst[i] = st[ax]
	}
	t := New(out...)
	for i, off := range gatherOffsets(out, pst) {
		t.Data[i] = x.Data[off]
	}
	return t
}

// split cuts x along axis into parts of the given shapes.
func split(x *Tensor, axis int, shapes [][]int) ([]*Tensor, error) {
	outer, n, inner := around(x.Shape, axis)
	outs := make([]*Tensor, len(shapes))
	start := 0
	for p, s := range shapes {
		if len(s) != len(x.Shape) || axis >= len(s) {
			return nil, fmt.Errorf("split part of shape %v from %v", s, x.Shape)
		}
		size := s[axis]
		if start+size > n {
			return nil, fmt.Errorf("split sizes exceed axis %d of %v", axis, x.Shape)
		}
		t := New(s...)
		for o := range outer {
			copy(t.Data[o*size*inner:(o+1)*size*inner], x.Data[(o*n+start)*inner:(o*n+start+size)*inner])
		}
		outs[p] = t
		start += size
	}
	if start != n {
		return nil, fmt.Errorf("split sizes add up to %d, axis %d of %v is %d", start, axis, x.Shape, n)
	}
	return outs, nil
}

// concat joins parts along axis; the other axes broadcast to out.
func concat(parts []*Tensor, axis int, out []int) (*Tensor, error) {
	t := New(out...)
	outer, n, inner := around(out, axis)
	start := 0
	for _, p := range parts {
		if len(p.Shape) != len(out) {
			return nil, fmt.Errorf("concat part of shape %v into %v", p.Shape, out)
		}
		size := p.Shape[axis]
		// The part stretched to the result's extents except along axis.
		target := append([]int(nil), out...)
		target[axis] = size
		idx, err := broadcastIndex(p.Shape, target)
		if err != nil {
			return nil, fmt.Errorf("concat: %w", err)
		}
		if start+size > n {
			return nil, fmt.Errorf("concat parts exceed axis %d of %v", axis, out)
		}
		k := 0
		for o := range outer {
			dst := t.Data[(o*n+start)*inner : (o*n+start+size)*inner]
			for j := range dst {
				src := k
				if idx != nil {
					src = idx[k]
				}
				dst[j] = p.Data[src]
				k++
			}
		}
		start += size
	}
	if start != n {
		return nil, fmt.Errorf("concat parts add up to %d along axis %d, the result has %d", start, axis, n)
	}
	return t, nil
}

// slice takes [start, end) of one axis.
func (m *machine) slice(n *ir.Node, x *Tensor, out []int) (*Tensor, error) {
	start, err := m.dim(n.Attr.Start)
	if err != nil {
		return nil, err
	}
	end, err := m.dim(n.Attr.End)
	if err != nil {
		return nil, err
	}
	ax := n.Attr.Axis
	outer, size, inner := around(x.Shape, ax)
	if start < 0 || end > size || start >= end || end-start != out[ax] {
		return nil, fmt.Errorf("slice [%d, %d) of axis %d of %v", start, end, ax, x.Shape)
	}
	t := New(out...)
	w := end - start
	for o := range outer {
		copy(t.Data[o*w*inner:(o+1)*w*inner], x.Data[(o*size+start)*inner:(o*size+end)*inner])
	}
	return t, nil
}

// gather returns the rows of table [V, D] at ids: a tensor ids.shape + [D].
func gather(table, ids *Tensor) (*Tensor, error) {
	if len(table.Shape) != 2 {
		return nil, fmt.Errorf("gather needs a table [V, D], got %v", table.Shape)
	}
	v, d := table.Shape[0], table.Shape[1]
	t := New(append(append([]int(nil), ids.Shape...), d)...)
	for i, x := range ids.Data {
		id := int(x)
		if float64(id) != x || id < 0 || id >= v {
			return nil, fmt.Errorf("gather id %g at %d is out of range [0, %d)", x, i, v)
		}
		copy(t.Data[i*d:(i+1)*d], table.Data[id*d:(id+1)*d])
	}
	return t, nil
}

// around returns the product of the extents before axis, the extent of
// axis and the product of the extents after it.
func around(shape []int, axis int) (outer, n, inner int) {
	return numElements(shape[:axis]), shape[axis], numElements(shape[axis+1:])
}
