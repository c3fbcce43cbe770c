package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// packedSeqs holds the sequences of a packed token axis: token n belongs
// to sequence seq[n], and sequence b holds tokens indptr[b] ..
// indptr[b+1]-1.
type packedSeqs struct {
	indptr, seq []int
}

// qlen returns the number of tokens of sequence b.
func (p *packedSeqs) qlen(b int) int { return p.indptr[b+1] - p.indptr[b] }

// packedOf returns the sequences of p's indptr, checked against a token
// axis of n tokens: it starts at 0, never decreases and ends at n.
func (m *machine) packedOf(p *ir.Packed, n int) (*packedSeqs, error) {
	t, err := m.arg(p.Indptr)
	if err != nil {
		return nil, err
	}
	indptr, err := ints(t, p.Indptr.Name)
	if err != nil {
		return nil, err
	}
	if err := checkIndptr(indptr, n, p.Indptr.Name); err != nil {
		return nil, err
	}
	ps := &packedSeqs{indptr: indptr, seq: make([]int, n)}
	for b := range len(indptr) - 1 {
		for i := indptr[b]; i < indptr[b+1]; i++ {
			ps.seq[i] = b
		}
	}
	return ps, nil
}

// checkIndptr checks an indptr of packed tokens: it starts at 0, never
// decreases and ends at the n tokens of the packed axis.
func checkIndptr(indptr []int, n int, name string) error {
	if len(indptr) < 1 || indptr[0] != 0 {
		return fmt.Errorf("packed indptr %s = %v must start at 0", name, indptr)
	}
	for b := 1; b < len(indptr); b++ {
		if indptr[b] < indptr[b-1] {
			return fmt.Errorf("packed indptr %s is not monotone: %s[%d] = %d > %s[%d] = %d", name, name, b-1, indptr[b-1], name, b, indptr[b])
		}
	}
	if last := indptr[len(indptr)-1]; last != n {
		return fmt.Errorf("packed indptr %s ends at %d, but the packed axis holds %d tokens", name, last, n)
	}
	return nil
}

// packedRope rotates packed tokens x [N, H, Dh] at positions pos [N]: one
// position a token.
func packedRope(x, pos *Tensor, theta float64) (*Tensor, error) {
	if len(x.Shape) != 3 || !equalInts(pos.Shape, x.Shape[:1]) {
		return nil, fmt.Errorf("rope of packed tokens %v at positions %v", x.Shape, pos.Shape)
	}
	x4 := &Tensor{Shape: append([]int{1}, x.Shape...), Data: x.Data}
	p2 := &Tensor{Shape: []int{1, pos.Shape[0]}, Data: pos.Data}
	out, err := rope(x4, p2, theta)
	if err != nil {
		return nil, err
	}
	out.Shape = out.Shape[1:]
	return out, nil
}
