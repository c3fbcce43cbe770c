package interp

import "fmt"

// scoreBias is an attention node's score bias read as the scores
// [B, H, S, N] it broadcasts to (aligned from the right, size-1 axes
// repeated).
type scoreBias struct {
	data []float64
	// stride is the element stride of sequence, head and query (0 along
	// a broadcast axis); n the keys of a row, contiguous.
	stride [3]int
	n      int
}

// newScoreBias reads bias t for queries [B, H, S, _] over n keys.
func newScoreBias(t *Tensor, B, H, S, n int) (*scoreBias, error) {
	if t == nil || len(t.Shape) < 1 || len(t.Shape) > 4 || len(t.Data) != numElements(t.Shape) {
		return nil, fmt.Errorf("attention bias missing or not of rank 1 to 4")
	}
	sh := append(make([]int, 4-len(t.Shape)), t.Shape...)
	for i := range 4 - len(t.Shape) {
		sh[i] = 1
	}
	if sh[3] != n {
		return nil, fmt.Errorf("attention bias %v over %d keys", t.Shape, n)
	}
	sb := &scoreBias{data: t.Data, n: n}
	step := n
	for ax := 2; ax >= 0; ax-- {
		want := [3]int{B, H, S}[ax]
		switch sh[ax] {
		case 1:
		case want:
			sb.stride[ax] = step
		default:
			return nil, fmt.Errorf("attention bias %v does not broadcast to the scores [%d %d %d %d]", t.Shape, B, H, S, n)
		}
		step *= sh[ax]
	}
	return sb, nil
}

// row is the bias of query i of head h of sequence b, one value a key.
func (sb *scoreBias) row(b, h, i int) []float64 {
	off := b*sb.stride[0] + h*sb.stride[1] + i*sb.stride[2]
	return sb.data[off : off+sb.n]
}
