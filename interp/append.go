package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// append returns the whole caches K, V [B, G, T+S, Dh]: sequence b's cached
// tokens 0..c_b-1, then the S new ones of k, v [B, G, S, Dh], then zeros,
// where c_b is T for a contiguous state and len_b - S for a paged or ragged
// one (its layout gives the lengths len_b after the append); and writes the
// new tokens into the state's physical tensor at positions c_b..c_b+S-1
// (see Run).
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
	cached := st.cached
	if st.layout == nil {
		cached = make([]int, B)
		for b := range cached {
			cached[b] = T
		}
	} else if S != st.S {
		return nil, fmt.Errorf("append of %d tokens, but the state was loaded for %d", S, st.S)
	}
	kv := [2]*Tensor{New(out...), New(out...)}
	for c, nw := range [2]*Tensor{k, v} {
		for b := range B {
			for g := range G {
				dst := kv[c].Data[(b*G+g)*(T+S)*Dh:]
				src := cache.Data[((c*B+b)*G+g)*T*Dh:]
				copy(dst[:cached[b]*Dh], src[:cached[b]*Dh])
				copy(dst[cached[b]*Dh:(cached[b]+S)*Dh], nw.Data[(b*G+g)*S*Dh:(b*G+g+1)*S*Dh])
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

// write copies new token s of sequence b (of k, v [B, G, S, Dh]) into both
// components of token position t of the physical tensor after.
func (st *stateStore) write(after, k, v *Tensor, b, s, t int) {
	S := k.Shape[2]
	for c, nw := range [2]*Tensor{k, v} {
		for g := range st.G {
			dst := st.row(c, b, g, t)
			src := ((b*st.G+g)*S + s) * st.Dh
			copy(after.Data[dst:dst+st.Dh], nw.Data[src:src+st.Dh])
		}
	}
}

// appendPaged writes the new tokens into a copy of the page pool, at
// positions len_b-S..len_b-1 of each sequence's own pages (the page table
// describes the cache after the step). A new token may not land on a slot
// holding a cached token or another new token, of any sequence.
func (st *stateStore) appendPaged(k, v *Tensor) (*Tensor, error) {
	p := st.table
	S := k.Shape[2]
	used := make([]bool, st.phys.Shape[0]*p.Page)
	for b, c := range st.cached {
		for t := range c {
			pg, slot := p.slot(b, t)
			used[pg*p.Page+slot] = true
		}
	}
	after := st.phys.Clone()
	for b, c := range st.cached {
		for s := range S {
			t := c + s
			pg, slot := p.slot(b, t)
			if used[pg*p.Page+slot] {
				return nil, fmt.Errorf("token %d of sequence %d would overwrite slot %d of page %d, which already holds a token", t, b, slot, pg)
			}
			used[pg*p.Page+slot] = true
			st.write(after, k, v, b, s, t)
		}
	}
	return after, nil
}

// appendRagged writes the new tokens into a copy of the ragged buffer: the
// last S rows of each sequence, indptr[b+1]-S..indptr[b+1]-1 (indptr
// describes the buffer after the step, so its shape does not change).
func (st *stateStore) appendRagged(k, v *Tensor) *Tensor {
	after := st.phys.Clone()
	for b, c := range st.cached {
		for s := range k.Shape[2] {
			st.write(after, k, v, b, s, c+s)
		}
	}
	return after
}
