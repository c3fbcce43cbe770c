package interp

import "fmt"

// broadcastIndex returns, for every element of a tensor of shape out, the
// offset of the element of a tensor of shape in that NumPy broadcasting
// (right-aligned, size-1 axes stretch) reads for it; nil when the shapes are
// equal and the offsets are the identity.
func broadcastIndex(in, out []int) ([]int, error) {
	if len(in) > len(out) {
		return nil, fmt.Errorf("cannot broadcast %v to %v", in, out)
	}
	if equalInts(in, out) {
		return nil, nil
	}
	// st[i] is the stride in the input of output axis i, 0 when stretched.
	st := make([]int, len(out))
	inSt := strides(in)
	lead := len(out) - len(in)
	for i := range out {
		j := i - lead
		switch {
		case j < 0 || in[j] == 1:
			st[i] = 0
		case in[j] == out[i]:
			st[i] = inSt[j]
		default:
			return nil, fmt.Errorf("cannot broadcast %v to %v", in, out)
		}
	}
	return gatherOffsets(out, st), nil
}

// gatherOffsets returns sum_i idx[i]*st[i] for every multi-index idx of
// shape, in row-major order.
func gatherOffsets(shape, st []int) []int {
	n := numElements(shape)
	offs := make([]int, n)
	if n == 0 {
		return offs
	}
	r := len(shape)
	if r == 0 {
		return offs
	}
	idx := make([]int, r)
	inner, innerSt := shape[r-1], st[r-1]
	base := 0
	for i := 0; i < n; i += inner {
		for k := range inner {
			offs[i+k] = base + k*innerSt
		}
		// Advance the odometer over the outer axes.
		for a := r - 2; a >= 0; a-- {
			idx[a]++
			base += st[a]
			if idx[a] < shape[a] {
				break
			}
			base -= idx[a] * st[a]
			idx[a] = 0
		}
	}
	return offs
}

func equalInts(a, b []int) bool {
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
