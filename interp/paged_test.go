package interp

import (
	"fmt"
	"math"
	"testing"

	"github.com/fuser-dev/fuser/ir"
)

// appendNode returns the graph's append node.
func appendNode(t *testing.T, g *ir.Graph) *ir.Node {
	for _, n := range g.Nodes {
		if n.Op == ir.OpAppend {
			return n
		}
	}
	t.Fatal("no append node")
	return nil
}

// sliceBatch returns sequence b of a tensor whose first axis is the batch.
func sliceBatch(x *Tensor, b int) *Tensor {
	n := len(x.Data) / x.Shape[0]
	shape := append([]int{1}, x.Shape[1:]...)
	return FromData(shape, append([]float64(nil), x.Data[b*n:(b+1)*n]...))
}

// contiguousCache builds a [2, 1, G, T, Dh] cache from token lists.
func contiguousCache(keys, vals [][][]float64, G, Dh int) *Tensor {
	T := len(keys[0])
	c := New(2, 1, G, T, Dh)
	for comp, src := range [][][][]float64{keys, vals} {
		for g := range G {
			for tok := range T {
				copy(c.Data[((comp*G+g)*T+tok)*Dh:], src[g][tok])
			}
		}
	}
	return c
}

// TestAttentionPaged checks decode and prefill over a paged cache with
// shuffled pages and mixed lengths against the reference, against the same
// attention over a contiguous cache holding each sequence's tokens, and
// checks the pool after append slot by slot.
func TestAttentionPaged(t *testing.T) {
	gc := build(t, subst(attnSpec, "dims", "", "extra", "", "layout", "", "score", "causal(s)"))
	for _, page := range []int{1, 4, 16} {
		for _, va := range variants[:2] {
			g := build(t, subst(attnSpec, "dims", ", P, N", "extra", pagedExtra, "layout", pagedLayout(page), "score", va.score))
			for _, S := range []int64{1, 7} {
				for _, T := range []int64{1, 5, 33} {
					t.Run(fmt.Sprintf("page=%d/%s/S=%d/T=%d", page, va.name, S, T), func(t *testing.T) {
						dims := map[string]int64{"B": 3, "S": S, "T": T}
						in, full := setup(t, g, dims, int64(page)*1000+S*100+T)
						res := run(t, g, full, in)
						o := va.opts
						o.scale = 1 / math.Sqrt(8)
						kp := func(c int, nw *Tensor) func(b, g int) [][]float64 {
							return pagedTokens(in["kv"], in["kv_indptr"], in["kv_pages"], in["kv_last"], nw, c)
						}
						want := refAttention(in["q"], 2, kp(0, in["k"]), kp(1, in["v"]), o)
						close(t, "o", res.Outputs["o"], want)
						if va.name == "causal" {
							checkPerSequence(t, gc, in, res.Outputs["o"], kp(0, in["k"]), kp(1, in["v"]), int(S))
						}
						checkPagedState(t, g, in, res, page, int(S))
					})
				}
			}
		}
	}
}

// checkPerSequence runs each sequence alone through the contiguous spec gc,
// with a cache of exactly its tokens, and compares with o.
func checkPerSequence(t *testing.T, gc *ir.Graph, in map[string]*Tensor, o *Tensor, keys, vals func(b, g int) [][]float64, S int) {
	t.Helper()
	G, Dh := in["k"].Shape[1], in["k"].Shape[3]
	for b := range in["q"].Shape[0] {
		var ks, vs [][][]float64
		for g := range G {
			ks, vs = append(ks, keys(b, g)[:len(keys(b, g))-S]), append(vs, vals(b, g)[:len(vals(b, g))-S])
		}
		one := map[string]*Tensor{
			"q": sliceBatch(in["q"], b), "k": sliceBatch(in["k"], b), "v": sliceBatch(in["v"], b),
			"kv": contiguousCache(ks, vs, G, Dh),
		}
		dims := map[string]int64{"B": 1, "S": int64(S), "T": int64(len(ks[0]))}
		res := run(t, gc, dims, one)
		close(t, fmt.Sprintf("o[%d] vs contiguous", b), res.Outputs["o"], sliceBatch(o, b).Data)
	}
}

// checkPagedState checks the pool after the step slot by slot: the page
// table describes each sequence after the append, so new token s of
// sequence b sits at position len_b-S+s, in page
// indices[indptr[b] + (len_b-S+s)/page] at slot (len_b-S+s)%page; every
// other slot is unchanged. It also reads the pool back through the same
// table and compares with append's K and V.
func checkPagedState(t *testing.T, g *ir.Graph, in map[string]*Tensor, res *Result, page, S int) {
	t.Helper()
	pool, got := in["kv"], res.States["kv"]
	if !got.SameShape(pool.Shape) {
		t.Fatalf("pool after the step has shape %v, want %v", got.Shape, pool.Shape)
	}
	G, Dh := pool.Shape[2], pool.Shape[4]
	indptr, indices, last := in["kv_indptr"].Data, in["kv_pages"].Data, in["kv_last"].Data
	B := len(last)
	want := pool.Clone()
	written := 0
	for b := range B {
		np := int(indptr[b+1] - indptr[b])
		n := 0
		if np > 0 {
			n = (np-1)*page + int(last[b])
		}
		if n < S {
			t.Fatalf("sequence %d holds %d tokens after the step, fewer than the %d appended", b, n, S)
		}
		for s := range S {
			tok := n - S + s
			p := int(indices[int(indptr[b])+tok/page])
			for c, nw := range []*Tensor{in["k"], in["v"]} {
				for g := range G {
					copy(want.Data[(((p*2+c)*G+g)*page+tok%page)*Dh:][:Dh], vec(nw, ((b*G+g)*S+s)*Dh, Dh))
					written += Dh
				}
			}
		}
	}
	for i := range want.Data {
		if got.Data[i] != want.Data[i] {
			t.Fatalf("pool element %d is %g, want %g", i, got.Data[i], want.Data[i])
		}
	}
	// The new tokens really changed the pool: the slots they took held
	// random values before the step.
	changed := 0
	for i := range got.Data {
		if got.Data[i] != pool.Data[i] {
			changed++
		}
	}
	if changed == 0 || changed > written {
		t.Fatalf("the step changed %d pool elements, want 1 to %d", changed, written)
	}
	// The table, unchanged, describes the pool after the step as append's
	// K and V.
	pt, err := NewPageTable(page, in["kv_indptr"], in["kv_pages"], in["kv_last"])
	if err != nil {
		t.Fatal(err)
	}
	ap := appendNode(t, g)
	for c, kv := range []*Tensor{res.Values[ap.Outs[0]], res.Values[ap.Outs[1]]} {
		tokens := pagedTokens(got, in["kv_indptr"], in["kv_pages"], in["kv_last"], New(B, G, 0, Dh), c)
		TS := kv.Shape[2]
		for b := range B {
			for g := range G {
				toks := tokens(b, g)
				if len(toks) != pt.Len(b) || len(toks) > TS {
					t.Fatalf("sequence %d holds %d tokens after the step, table says %d", b, len(toks), pt.Len(b))
				}
				for tok := range TS {
					for d := range Dh {
						w := 0.0
						if tok < len(toks) {
							w = toks[tok][d]
						}
						if x := kv.At(b, g, tok, d); x != w {
							t.Fatalf("component %d of token %d of sequence %d, head %d: K/V has %g, the pool %g", c, tok, b, g, x, w)
						}
					}
				}
			}
		}
	}
}
