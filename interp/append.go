package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// append returns the whole caches K, V [B, G, T+S, Dh]: sequence b's cached
// tokens 0..c_b-1, then its new ones, then zeros, where c_b is T for a
// contiguous state and len_b minus its new tokens for a paged or ragged one
// (its layout gives the lengths len_b after the append); and writes the new
// tokens into the state's physical tensor at positions c_b, c_b+1, ... (see
// Run). The new tokens are k, v [B, G, S, Dh], S a sequence, or packed k, v
// [G, N, Dh], sequence b's own tokens indptr[b] .. indptr[b+1]-1 (N stands
// for S in the result's shape).
func (m *machine) append(n *ir.Node, args []*Tensor, out []int) ([]*Tensor, error) {
	st := m.states[n.Args[0]]
	if st == nil {
		return nil, fmt.Errorf("append needs a state leaf, got %s", n.Args[0].Ref())
	}
	if st.after != nil {
		return nil, fmt.Errorf("state %s is appended to twice in one step", n.Args[0].Name)
	}
	cache := args[0]
	nt, err := st.newTokens(args[1], args[2])
	if err != nil {
		return nil, err
	}
	B, G, T, Dh, S := st.B, st.G, st.T, st.Dh, nt.extent
	if !equalInts(out, []int{B, G, T + S, Dh}) {
		return nil, fmt.Errorf("append result %v, want [%d %d %d %d]", out, B, G, T+S, Dh)
	}
	cached := st.cached
	if st.layout == nil {
		cached = make([]int, B)
		for b := range cached {
			cached[b] = T
		}
	}
	kv := [2]*Tensor{New(out...), New(out...)}
	for c, nw := range [2]*Tensor{nt.k, nt.v} {
		for b := range B {
			for g := range G {
				dst := kv[c].Data[(b*G+g)*(T+S)*Dh:]
				src := cache.Data[((c*B+b)*G+g)*T*Dh:]
				copy(dst[:cached[b]*Dh], src[:cached[b]*Dh])
				for s := range nt.count(b) {
					o := nt.src(b, g, s)
					copy(dst[(cached[b]+s)*Dh:(cached[b]+s+1)*Dh], nw.Data[o:o+Dh])
				}
			}
		}
	}
	switch {
	case st.table != nil:
		st.after, err = st.appendPaged(nt)
	case st.indptr != nil:
		st.after = st.appendRagged(nt)
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

// newTokens are the tokens one append writes: count(b) of sequence b, the
// s-th of kv head g at offset src(b, g, s) of k and v; extent is their
// axis' length (S, or N packed tokens).
type newTokens struct {
	k, v   *Tensor
	extent int
	count  func(b int) int
	src    func(b, g, s int) int
}

// newTokens checks the new tokens k, v of an append to st: [B, G, S, Dh],
// or packed [G, N, Dh] when the state was loaded for packed tokens.
func (st *stateStore) newTokens(k, v *Tensor) (*newTokens, error) {
	B, G, Dh := st.B, st.G, st.Dh
	if p := st.packed; p != nil {
		if len(k.Shape) != 3 || k.Shape[0] != G || k.Shape[1] != len(p.seq) || k.Shape[2] != Dh || !v.SameShape(k.Shape) {
			return nil, fmt.Errorf("append of packed k %v and v %v to a cache [2, %d, %d, %d, %d] (%d tokens)", k.Shape, v.Shape, B, G, st.T, Dh, len(p.seq))
		}
		N := k.Shape[1]
		return &newTokens{k: k, v: v, extent: N, count: p.qlen, src: func(b, g, s int) int { return (g*N + p.indptr[b] + s) * Dh }}, nil
	}
	if len(k.Shape) != 4 || k.Shape[0] != B || k.Shape[1] != G || k.Shape[3] != Dh || !v.SameShape(k.Shape) {
		return nil, fmt.Errorf("append of k %v and v %v to a cache [2, %d, %d, %d, %d]", k.Shape, v.Shape, B, G, st.T, Dh)
	}
	S := k.Shape[2]
	if st.layout != nil && S != st.S {
		return nil, fmt.Errorf("append of %d tokens, but the state was loaded for %d", S, st.S)
	}
	return &newTokens{k: k, v: v, extent: S, count: func(int) int { return S }, src: func(b, g, s int) int { return ((b*G+g)*S + s) * Dh }}, nil
}

// write copies new token s of sequence b into both components of token
// position t of the physical tensor after.
func (st *stateStore) write(after *Tensor, nt *newTokens, b, s, t int) {
	for c, nw := range [2]*Tensor{nt.k, nt.v} {
		for g := range st.G {
			dst := st.row(c, b, g, t)
			src := nt.src(b, g, s)
			copy(after.Data[dst:dst+st.Dh], nw.Data[src:src+st.Dh])
		}
	}
}

// appendPaged writes the new tokens into a copy of the page pool, after
// each sequence's cached tokens in its own pages (the page table describes
// the cache after the step). A new token may not land on a slot holding a
// cached token or another new token, of any sequence.
func (st *stateStore) appendPaged(nt *newTokens) (*Tensor, error) {
	p := st.table
	used := make([]bool, st.phys.Shape[0]*p.Page)
	for b, c := range st.cached {
		for t := range c {
			pg, slot := p.slot(b, t)
			used[pg*p.Page+slot] = true
		}
	}
	after := st.phys.Clone()
	for b, c := range st.cached {
		for s := range nt.count(b) {
			t := c + s
			pg, slot := p.slot(b, t)
			if used[pg*p.Page+slot] {
				return nil, fmt.Errorf("token %d of sequence %d would overwrite slot %d of page %d, which already holds a token", t, b, slot, pg)
			}
			used[pg*p.Page+slot] = true
			st.write(after, nt, b, s, t)
		}
	}
	return after, nil
}

// appendRagged writes the new tokens into a copy of the ragged buffer: the
// last rows of each sequence, up to indptr[b+1]-1 (indptr describes the
// buffer after the step, so its shape does not change).
func (st *stateStore) appendRagged(nt *newTokens) *Tensor {
	after := st.phys.Clone()
	for b, c := range st.cached {
		for s := range nt.count(b) {
			st.write(after, nt, b, s, c+s)
		}
	}
	return after
}
