package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// packedMatmul computes packed tokens a [..., N, K] times per-sequence
// matrices b [B, ..., K, M] into out [..., N, M]: row n reads the matrix of
// its own sequence (see ir.Packed). The other batch axes broadcast as in
// matmul, head groups included. The contraction skips positions that do
// not exist in a ragged a (last axis) or a ragged b (second-to-last axis).
func (m *machine) packedMatmul(n *ir.Node, a, b *Tensor, out []int) (*Tensor, error) {
	ra, rb, ro := len(a.Shape), len(b.Shape), len(out)
	if ra < 2 || rb != ra+1 || ro != ra {
		return nil, fmt.Errorf("packed matmul of %v and %v", a.Shape, b.Shape)
	}
	N, K, M := a.Shape[ra-2], a.Shape[ra-1], b.Shape[rb-1]
	if b.Shape[rb-2] != K || out[ro-2] != N || out[ro-1] != M {
		return nil, fmt.Errorf("packed matmul of %v and %v into %v", a.Shape, b.Shape, out)
	}
	ps, err := m.packedOf(n.Args[0].Packed, N)
	if err != nil {
		return nil, err
	}
	if len(ps.indptr)-1 != b.Shape[0] {
		return nil, fmt.Errorf("packed matmul: %d sequences of tokens, %d matrices", len(ps.indptr)-1, b.Shape[0])
	}
	batch := out[:ro-2]
	aOff, err := batchOffsets(a.Shape[:ra-2], batch, N*K)
	if err != nil {
		return nil, fmt.Errorf("matmul left operand: %w", err)
	}
	bOff, err := batchOffsets(b.Shape[1:rb-2], batch, K*M)
	if err != nil {
		return nil, fmt.Errorf("matmul right operand: %w", err)
	}
	va, vb, err := m.contraction(n, a, b)
	if err != nil {
		return nil, err
	}
	seqSize := numElements(b.Shape[1:])
	t := New(out...)
	for bi := range aOff {
		for i := range N {
			s := ps.seq[i]
			bo := s*seqSize + bOff[bi]
			B := b.Data[bo : bo+K*M]
			row := a.Data[aOff[bi]+i*K : aOff[bi]+(i+1)*K]
			c := t.Data[(bi*N+i)*M : (bi*N+i+1)*M]
			for k := range min(va.limitAt(aOff[bi]+i*K, K), vb.limitAt(bo, K)) {
				av := row[k]
				for j, bv := range B[k*M : (k+1)*M] {
					c[j] += av * bv
				}
			}
		}
	}
	return t, nil
}
