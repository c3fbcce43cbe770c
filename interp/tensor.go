package interp

import (
	"fmt"
	"slices"
)

// Tensor is a dense tensor of float64 in row-major order. An i32 tensor holds
// integral values. A scalar has an empty Shape and one element.
type Tensor struct {
	Shape []int
	Data  []float64
}

// New returns a zero tensor of the given shape.
func New(shape ...int) *Tensor {
	return &Tensor{Shape: slices.Clone(shape), Data: make([]float64, numElements(shape))}
}

// FromData returns a tensor of the given shape holding data (not copied). It
// panics when the length of data does not match the shape; it is meant for
// literals in tests and tools.
func FromData(shape []int, data []float64) *Tensor {
	if len(data) != numElements(shape) {
		panic(fmt.Sprintf("interp.FromData: %d values for shape %v", len(data), shape))
	}
	return &Tensor{Shape: slices.Clone(shape), Data: data}
}

// Scalar returns a tensor of shape [] holding x.
func Scalar(x float64) *Tensor { return &Tensor{Shape: []int{}, Data: []float64{x}} }

// Len returns the number of elements.
func (t *Tensor) Len() int { return len(t.Data) }

// Clone returns a deep copy of t.
func (t *Tensor) Clone() *Tensor {
	return &Tensor{Shape: slices.Clone(t.Shape), Data: slices.Clone(t.Data)}
}

// Strides returns the row-major stride of every axis, in elements.
func (t *Tensor) Strides() []int { return strides(t.Shape) }

// Index returns the offset in Data of the element at idx. It panics when idx
// has the wrong rank or is out of range.
func (t *Tensor) Index(idx ...int) int {
	if len(idx) != len(t.Shape) {
		panic(fmt.Sprintf("interp: index %v into a tensor of shape %v", idx, t.Shape))
	}
	off := 0
	for i, x := range idx {
		if x < 0 || x >= t.Shape[i] {
			panic(fmt.Sprintf("interp: index %v out of range for shape %v", idx, t.Shape))
		}
		off = off*t.Shape[i] + x
	}
	return off
}

// At returns the element at idx.
func (t *Tensor) At(idx ...int) float64 { return t.Data[t.Index(idx...)] }

// Set stores x at idx.
func (t *Tensor) Set(x float64, idx ...int) { t.Data[t.Index(idx...)] = x }

// SameShape reports whether t has the given shape.
func (t *Tensor) SameShape(shape []int) bool { return slices.Equal(t.Shape, shape) }

// String prints the shape and up to 8 leading values.
func (t *Tensor) String() string {
	n := min(len(t.Data), 8)
	s := fmt.Sprintf("tensor%v %v", t.Shape, t.Data[:n])
	if n < len(t.Data) {
		s = s[:len(s)-1] + " ...]"
	}
	return s
}

// numElements is the product of the extents (1 for a scalar).
func numElements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// strides returns row-major strides for shape.
func strides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}
