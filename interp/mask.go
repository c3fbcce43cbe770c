package interp

import (
	"fmt"
	"math"

	"github.com/fuser-dev/fuser/ir"
)

// mask applies causal(s) or window(s, W) to scores s [..., Sq, Tk]: query i
// sits at key position q = Tk_eff - Sq + i, where Tk_eff is the number of
// keys of its sequence (Tk, or the ragged length when the key axis is
// ragged); keys j > q, and for window also j < q - W + 1, become -Inf.
// Packed queries (the Sq axis packed) count within their own sequence: the
// query at index n of sequence b sits at len_b - qlen_b + n - indptr[b].
func (m *machine) mask(n *ir.Node, s *Tensor) (*Tensor, error) {
	r := len(s.Shape)
	if r < 2 {
		return nil, fmt.Errorf("%s needs rank >= 2, got shape %v", n.Op, s.Shape)
	}
	w := -1
	if n.Op == ir.OpWindow {
		var err error
		if w, err = m.dim(n.Attr.W); err != nil {
			return nil, err
		}
		if w < 1 {
			return nil, fmt.Errorf("window size %d is not positive", w)
		}
	}
	var vd *validity
	if rg := n.Args[0].Ragged; rg != nil && rg.Axis == r-1 {
		var err error
		if vd, err = m.validity(n.Args[0], s.Shape); err != nil {
			return nil, err
		}
	}
	out := s.Clone()
	sq, tk := s.Shape[r-2], s.Shape[r-1]
	if len(out.Data) == 0 {
		return out, nil
	}
	pos, err := m.queryPos(n, sq)
	if err != nil {
		return nil, err
	}
	inf := math.Inf(-1)
	for row := 0; row < len(out.Data); row += tk {
		i, cnt := pos(row / tk % sq)
		q := vd.limitAt(row, tk) - cnt + i
		lo := 0
		if w > 0 {
			lo = q - w + 1
		}
		line := out.Data[row : row+tk]
		for j := range line {
			if j > q || j < lo {
				line[j] = inf
			}
		}
	}
	return out, nil
}

// queryPos returns, for the mask n over scores of sq queries, query i's
// place among its sequence's queries and their count: i of sq, or, for
// packed queries, its index in its own sequence and that sequence's
// tokens.
func (m *machine) queryPos(n *ir.Node, sq int) (func(i int) (int, int), error) {
	p := n.Args[0].Packed
	if p == nil || p.Axis != len(n.Args[0].Type.Shape)-2 {
		return func(i int) (int, int) { return i, sq }, nil
	}
	ps, err := m.packedOf(p, sq)
	if err != nil {
		return nil, err
	}
	return func(i int) (int, int) { b := ps.seq[i]; return i - ps.indptr[b], ps.qlen(b) }, nil
}
