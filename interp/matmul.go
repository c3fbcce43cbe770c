package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// matmul computes a [..., M, K] @ b [..., K, N] into a tensor of shape out
// [..., M, N]. A 2-D b is shared by every batch. Batch axes broadcast
// (right-aligned, size 1 stretches), and an axis of a of size x against one
// of b of size y with x % y == 0 is a head group: index h of the result
// reads index h / (x/y) of b. The contraction skips positions that do not
// exist in a ragged a (last axis) or a ragged b (second-to-last axis).
func (m *machine) matmul(n *ir.Node, a, b *Tensor, out []int) (*Tensor, error) {
	ra, rb, ro := len(a.Shape), len(b.Shape), len(out)
	if ra < 2 || rb < 2 || ro < 2 {
		return nil, fmt.Errorf("matmul of %v and %v", a.Shape, b.Shape)
	}
	M, K := a.Shape[ra-2], a.Shape[ra-1]
	N := b.Shape[rb-1]
	if b.Shape[rb-2] != K || out[ro-2] != M || out[ro-1] != N {
		return nil, fmt.Errorf("matmul of %v and %v into %v", a.Shape, b.Shape, out)
	}
	batch := out[:ro-2]
	aOff, err := batchOffsets(a.Shape[:ra-2], batch, M*K)
	if err != nil {
		return nil, fmt.Errorf("matmul left operand: %w", err)
	}
	var bOff []int
	if rb == 2 {
		bOff = make([]int, numElements(batch))
	} else if bOff, err = batchOffsets(b.Shape[:rb-2], batch, K*N); err != nil {
		return nil, fmt.Errorf("matmul right operand: %w", err)
	}
	va, vb, err := m.contraction(n, a, b)
	if err != nil {
		return nil, err
	}
	// perColumn: b's sequence is its last axis, so its limit varies with n.
	perColumn := vb != nil && n.Args[1].Ragged.Batch == rb-1
	t := New(out...)
	if len(t.Data) == 0 {
		return t, nil
	}
	kLimB := make([]int, N)
	for bi := range bOff {
		A, B := a.Data[aOff[bi]:aOff[bi]+M*K], b.Data[bOff[bi]:bOff[bi]+K*N]
		C := t.Data[bi*M*N : (bi+1)*M*N]
		kb := vb.limitAt(bOff[bi], K)
		if perColumn {
			for j := range N {
				kLimB[j] = vb.limitAt(bOff[bi]+j, K)
			}
		}
		for i := range M {
			kk := min(va.limitAt(aOff[bi]+i*K, K), kb)
			row, c := A[i*K:(i+1)*K], C[i*N:(i+1)*N]
			if perColumn {
				for j := range N {
					s := 0.0
					for k := range min(va.limitAt(aOff[bi]+i*K, K), kLimB[j]) {
						s += row[k] * B[k*N+j]
					}
					c[j] = s
				}
				continue
			}
			for k := range kk {
				av := row[k]
				br := B[k*N : (k+1)*N]
				for j, bv := range br {
					c[j] += av * bv
				}
			}
		}
	}
	return t, nil
}

// batchOffsets returns, for each index of the result's batch axes, the
// offset of the operand's matrix: operand batch axes (right-aligned) equal
// to the result's map index h to h, size-1 axes to 0, and axes of size y
// dividing the result's x to h / (x/y).
func batchOffsets(in, out []int, matrix int) ([]int, error) {
	if len(in) > len(out) {
		return nil, fmt.Errorf("batch axes %v do not fit %v", in, out)
	}
	n := numElements(out)
	offs := make([]int, n)
	if n == 0 {
		return offs, nil
	}
	inSt := strides(in)
	lead := len(out) - len(in)
	idx := make([]int, len(out))
	for i := range n {
		off := 0
		for ax, h := range idx {
			j := ax - lead
			if j < 0 {
				continue
			}
			d, x := in[j], out[ax]
			switch {
			case d == x:
			case d == 1:
				h = 0
			case d > 0 && x%d == 0:
				h /= x / d
			default:
				return nil, fmt.Errorf("batch axis of size %d does not broadcast to %d", d, x)
			}
			off += h * inSt[j]
		}
		offs[i] = off * matrix
		for ax := len(idx) - 1; ax >= 0; ax-- {
			idx[ax]++
			if idx[ax] < out[ax] {
				break
			}
			idx[ax] = 0
		}
	}
	return offs, nil
}

// contraction returns the validities that limit the contraction of a
// matmul of a and b: a's when its last axis is ragged, b's when its
// second-to-last is (nil where the axis is dense).
func (m *machine) contraction(n *ir.Node, a, b *Tensor) (va, vb *validity, err error) {
	if r := n.Args[0].Ragged; r != nil && r.Axis == len(a.Shape)-1 {
		if va, err = m.validity(n.Args[0], a.Shape); err != nil {
			return nil, nil, err
		}
	}
	if r := n.Args[1].Ragged; r != nil && r.Axis == len(b.Shape)-2 {
		if vb, err = m.validity(n.Args[1], b.Shape); err != nil {
			return nil, nil, err
		}
	}
	return va, vb, nil
}
