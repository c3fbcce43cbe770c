package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// varlenAttention computes an attention node over packed queries (see
// ir.Attention.Varlen): q [H, N, Dh], K and V [B, G, T, Dh]; token n of
// sequence b attends, as attention does, to the existing keys of its own
// sequence only, at key position len_b - qlen_b + (n - indptr[b]).
func (m *machine) varlenAttention(n *ir.Node, args []*Tensor, out []int) (*Tensor, error) {
	at := n.Attr.Attn
	if len(args) != 3 {
		return nil, fmt.Errorf("varlen attention has %d arguments, want q, K and V", len(args))
	}
	q, k, v := args[0], args[1], args[2]
	if len(q.Shape) != 3 || !equalInts(out, q.Shape) {
		return nil, fmt.Errorf("varlen attention query %v, result %v", q.Shape, out)
	}
	H, N, Dh := q.Shape[0], q.Shape[1], q.Shape[2]
	if len(k.Shape) != 4 || !equalInts(k.Shape, v.Shape) || k.Shape[3] != Dh || k.Shape[1] < 1 || H%k.Shape[1] != 0 {
		return nil, fmt.Errorf("varlen attention keys %v and values %v for queries %v", k.Shape, v.Shape, q.Shape)
	}
	B, G, T := k.Shape[0], k.Shape[1], k.Shape[2]
	ps, err := m.packedOf(n.Args[0].Packed, N)
	if err != nil {
		return nil, err
	}
	if len(ps.indptr)-1 != B {
		return nil, fmt.Errorf("varlen attention: %d sequences of queries, keys of %d", len(ps.indptr)-1, B)
	}
	vk, err := m.validity(n.Args[1], k.Shape)
	if err != nil {
		return nil, err
	}
	vv, err := m.validity(n.Args[2], v.Shape)
	if err != nil {
		return nil, err
	}
	window := 0
	if !at.Window.IsZero() {
		if window, err = m.dim(at.Window); err != nil {
			return nil, err
		}
	}
	res := New(out...)
	scores := make([]float64, T)
	var keys []attnKey
	for b := range B {
		for h := range H {
			base := (b*G + h/(H/G)) * T * Dh
			cnt := min(vk.limitAt(base, T), vv.limitAt(base, T))
			keys = keys[:0]
			for j := range cnt {
				keys = append(keys, attnKey{k.Data[base+j*Dh : base+(j+1)*Dh], v.Data[base+j*Dh : base+(j+1)*Dh]})
			}
			for i := ps.indptr[b]; i < ps.indptr[b+1]; i++ {
				off := (h*N + i) * Dh
				attendRow(at, window, q.Data[off:off+Dh], keys, cnt-ps.qlen(b)+i-ps.indptr[b], nil, scores[:cnt], res.Data[off:off+Dh])
			}
		}
	}
	return res, nil
}
