package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// append returns the whole caches K, V [B, G, T+S, Dh]: sequence b's cached
// tokens 0..len_b-1, then the S new ones of k, v [B, G, S, Dh], then zeros;
// and writes the new tokens into the state's physical tensor (see Run).
func (m *machine) append(n *ir.Node, args []*Tensor, out []int) ([]*Tensor, error) {
	st := m.states[n.Args[0]]
	if st == nil {
		return nil, fmt.Errorf("append needs a state leaf, got %s", n.Args[0].Ref())
	}
	if st.after != nil {
		return nil, fmt.Errorf("state %s is appended to twice in one step", n.Args[0].Name)
	}
	cache, k, v := args[0], args[1], args[2]
	B, G, T, Dh := st.B, st.G, st.T, st.Dh
	if len(k.Shape) != 4 || k.Shape[0] != B || k.Shape[1] != G || k.Shape[3] != Dh || !v.SameShape(k.Shape) {
		return nil, fmt.Errorf("append of k %v and v %v to a cache [2, %d, %d, %d, %d]", k.Shape, v.Shape, B, G, T, Dh)
	}
	S := k.Shape[2]
	if !equalInts(out, []int{B, G, T + S, Dh}) {
		return nil, fmt.Errorf("append result %v, want [%d %d %d %d]", out, B, G, T+S, Dh)
	}
	lens := st.lens
	if lens == nil {
		lens = make([]int, B)
		for b := range lens {
			lens[b] = T
		}
	}
	kv := [2]*Tensor{New(out...), New(out...)}
	for c, nw := range [2]*Tensor{k, v} {
		for b := range B {
			for g := range G {
				dst := kv[c].Data[(b*G+g)*(T+S)*Dh:]
				src := cache.Data[((c*B+b)*G+g)*T*Dh:]
				copy(dst[:lens[b]*Dh], src[:lens[b]*Dh])
				copy(dst[lens[b]*Dh:(lens[b]+S)*Dh], nw.Data[(b*G+g)*S*Dh:(b*G+g+1)*S*Dh])
			}
		}
	}
	var err error
	switch {
	case st.table != nil:
		st.after, err = st.appendPaged(k, v)
	case st.indptr != nil:
		st.after = st.appendRagged(k, v)
	default:
		// A contiguous cache after the step is the whole cache.
		st.after = New(2, B, G, T+S, Dh)
		copy(st.after.Data, kv[0].Data)
		copy(st.after.Data[len(kv[0].Data):], kv[1].Data)
	}
	if err != nil {
		return nil, err
	}
	return kv[:], nil
}

// appendPaged writes the new tokens into a copy of the page pool. Tokens
// that do not fit in a sequence's pages go to spare pages (see Run). A new
// token may not land on a slot holding a cached token or another new token.
func (st *stateStore) appendPaged(k, v *Tensor) (*Tensor, error) {
	p := st.table
	S := k.Shape[2]
	pool := st.phys.Shape[0]
	_, start, _ := p.spare(S)
	used := make([]bool, pool*p.Page)
	for b, l := range st.lens {
		for t := range l {
			pg, slot, _ := p.slot(b, t, 0, nil)
			used[pg*p.Page+slot] = true
		}
	}
	after := st.phys.Clone()
	for b, l := range st.lens {
		for s := range S {
			t := l + s
			pg, slot, err := p.slot(b, t, S, start)
			if err != nil {
				return nil, err
			}
			if pg < 0 || pg >= pool {
				return nil, fmt.Errorf("spare page index %d for token %d of sequence %d is out of the pool [0, %d)", pg, t, b, pool)
			}
			if used[pg*p.Page+slot] {
				return nil, fmt.Errorf("token %d of sequence %d would overwrite slot %d of page %d, which already holds a token", t, b, slot, pg)
			}
			used[pg*p.Page+slot] = true
			for c, nw := range [2]*Tensor{k, v} {
				for g := range st.G {
					dst := (((pg*2+c)*st.G+g)*p.Page + slot) * st.Dh
					src := ((b*st.G+g)*S + s) * st.Dh
					copy(after.Data[dst:dst+st.Dh], nw.Data[src:src+st.Dh])
				}
			}
		}
	}
	return after, nil
}

// appendRagged returns the ragged buffer after the step: [2, G, N + B*S, Dh]
// with sequence b's old then new tokens from row indptr[b] + b*S on.
func (st *stateStore) appendRagged(k, v *Tensor) *Tensor {
	S := k.Shape[2]
	n := st.indptr[len(st.indptr)-1]
	rows := n + st.B*S
	after := New(2, st.G, rows, st.Dh)
	for c, nw := range [2]*Tensor{k, v} {
		for b, l := range st.lens {
			for g := range st.G {
				dst := ((c*st.G+g)*rows + st.indptr[b] + b*S) * st.Dh
				src := st.row(c, b, g, 0)
				copy(after.Data[dst:dst+l*st.Dh], st.phys.Data[src:src+l*st.Dh])
				dst += l * st.Dh
				copy(after.Data[dst:dst+S*st.Dh], nw.Data[(b*st.G+g)*S*st.Dh:(b*st.G+g+1)*S*st.Dh])
			}
		}
	}
	return after
}
