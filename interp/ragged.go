package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// validity says which positions of a ragged value exist: along axis, index j
// of sequence b exists iff j < lim[b], b being the index on the batch axis
// (sequence 0 when the value has no batch axis). A nil *validity is a dense
// value: every position exists.
type validity struct {
	axisStride, axisSize   int
	batchStride, batchSize int // batchStride 0: no batch axis
	lim                    []int
}

// validity returns the validity of v (nil when v is not ragged), for the
// tensor shape it has.
func (m *machine) validity(v *ir.Value, shape []int) (*validity, error) {
	r := v.Ragged
	if r == nil {
		return nil, nil
	}
	if vd, ok := m.valids[v]; ok {
		return vd, nil
	}
	lensT, ok := m.vals[r.Lens]
	if !ok {
		return nil, fmt.Errorf("sequence lengths %s of %s are not computed", r.Lens.Ref(), v.Ref())
	}
	extra, err := m.dim(r.Extra)
	if err != nil {
		return nil, err
	}
	if r.Axis < 0 || r.Axis >= len(shape) || r.Batch >= len(shape) || r.Batch == r.Axis {
		return nil, fmt.Errorf("ragged marker (axis %d, batch %d) does not fit %s of shape %v", r.Axis, r.Batch, v.Ref(), shape)
	}
	st := strides(shape)
	vd := &validity{axisStride: st[r.Axis], axisSize: shape[r.Axis]}
	nb := 1
	if r.Batch >= 0 {
		vd.batchStride, vd.batchSize = st[r.Batch], shape[r.Batch]
		nb = shape[r.Batch]
	}
	// seqOf maps an index on the batch axis to its sequence: the identity,
	// or each token's own sequence when the batch axis is packed tokens.
	seqOf := func(b int) int { return b }
	if p := v.Packed; p != nil && r.Batch == p.Axis {
		ps, err := m.packedOf(p, nb)
		if err != nil {
			return nil, err
		}
		seqOf = func(n int) int { return ps.seq[n] }
	}
	less, err := m.lessOf(r)
	if err != nil {
		return nil, err
	}
	vd.lim = make([]int, nb)
	for i := range nb {
		b := seqOf(i)
		if b >= len(lensT.Data) {
			return nil, fmt.Errorf("%s has sequence %d on its batch axis %d but %s holds %d lengths", v.Ref(), b, r.Batch, r.Lens.Ref(), len(lensT.Data))
		}
		vd.lim[i] = min(max(int(lensT.Data[b])+extra-less(b), 0), vd.axisSize)
	}
	m.valids[v] = vd
	return vd, nil
}

// batchOf returns the sequence of the element at flat offset off.
func (vd *validity) batchOf(off int) int {
	if vd.batchStride == 0 {
		return 0
	}
	return off / vd.batchStride % vd.batchSize
}

// ok reports whether the element at flat offset off exists.
func (vd *validity) ok(off int) bool {
	if vd == nil {
		return true
	}
	return off/vd.axisStride%vd.axisSize < vd.lim[vd.batchOf(off)]
}

// limitAt returns how many positions exist along the ragged axis for the
// sequence of the element at flat offset off; n when vd is nil.
func (vd *validity) limitAt(off, n int) int {
	if vd == nil {
		return n
	}
	return vd.lim[vd.batchOf(off)]
}

// zero stores 0 at every non-existing position of t.
func (vd *validity) zero(t *Tensor) {
	if vd == nil || len(t.Data) == 0 {
		return
	}
	for i := range t.Data {
		if !vd.ok(i) {
			t.Data[i] = 0
		}
	}
}

// lessOf returns, per sequence, the positions a ragged marker's Less
// removes: the tokens its indptr packs for that sequence (0 without Less).
func (m *machine) lessOf(r *ir.Ragged) (func(b int) int, error) {
	if r.Less == nil {
		return func(int) int { return 0 }, nil
	}
	t, err := m.arg(r.Less)
	if err != nil {
		return nil, err
	}
	indptr, err := ints(t, r.Less.Name)
	if err != nil {
		return nil, err
	}
	return func(b int) int {
		if b+1 < len(indptr) {
			return indptr[b+1] - indptr[b]
		}
		return 0
	}, nil
}
