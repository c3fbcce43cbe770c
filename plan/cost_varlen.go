package plan

import (
	"fmt"

	"github.com/fuser-dev/fuser/internal/intmath"
	"github.com/fuser-dev/fuser/ir"
)

// The cost of attention over packed queries (ir.Attention.Varlen) depends
// on each sequence's query count, which only the indptr knows at run
// time. The model splits the N tokens evenly over the B sequences
// (PackedSplit) and gives sequence b, with q_b queries, T + q_b keys in a
// cache its packed tokens are appended to ([B, G, T + N, Dh]: its T
// cached tokens, the most the state holds, and its own new ones), or the
// T keys of any other K. A sequence without queries reads no key.
//
// HBM: every key that some query of its sequence sees (K and V) is read
// once; L2: the sequence's other query tiles and the other query heads of
// its kv head read those keys again, from L2 (the keys of the sequences a
// wave of tiles works on fit there, as for padded prefill).

// packedCache returns the append of packed tokens that returned the cache
// v ([B, G, T + N, Dh]), or nil when v is no such cache.
func packedCache(v *ir.Value) *ir.Node {
	if !InCache(v) || v.Def.Args[1].Packed == nil {
		return nil
	}
	return v.Def
}

// ReadBytes is the bytes a kernel reading all of v moves: its size, but
// for the whole cache an append of packed tokens returns, the keys of the
// sequences with queries, T + q_b each (see PackedSplit), not B·(T + N).
func ReadBytes(v *ir.Value, dims map[string]int64) (int64, error) {
	app := packedCache(v)
	if app == nil {
		return Bytes(v, dims)
	}
	s, err := v.Type.Shape.Eval(dims)
	if err != nil {
		return 0, err
	}
	n, err := app.Args[1].Type.Shape[1].Eval(dims)
	if err != nil {
		return 0, err
	}
	cached, tokens := int64(s[2])-n, int64(0)
	for _, q := range PackedSplit(n, int64(s[0])) {
		if q > 0 {
			tokens += cached + q
		}
	}
	return tokens * int64(s[1]) * int64(s[3]) * v.Type.DType.Size(), nil
}

// varlenSeqs is the query and key count of each sequence of a varlen
// attention node under the model's split.
func varlenSeqs(n *ir.Node, dims map[string]int64) (qlens, klens []int64, err error) {
	k := n.Args[1]
	ks, err := k.Type.Shape.Eval(dims)
	if err != nil {
		return nil, nil, err
	}
	nq, err := n.Args[0].Type.Shape[1].Eval(dims)
	if err != nil {
		return nil, nil, err
	}
	qlens = PackedSplit(nq, int64(ks[0]))
	for _, q := range qlens {
		keys := int64(ks[2])
		if packedCache(Root(k)) != nil {
			keys += q - nq
		}
		klens = append(klens, keys)
	}
	return qlens, klens, nil
}

// visibleKeys is the key range [lo, hi) that query i of sq queries over tk
// keys (at key position tk - sq + i) sees under the node's mask.
func visibleKeys(at *ir.Attention, tk, sq, i int64) (lo, hi int64) {
	hi = tk
	if at.Causal {
		hi = min(tk, tk-sq+i+1)
	}
	if w, ok := at.Window.Value(); ok && w > 0 {
		lo = max(0, tk-sq+i-w+1)
	}
	return lo, max(hi, lo)
}

// varlenTraffic is the HBM bytes of K and V and the L2 bytes of a varlen
// attention node at launch l: per sequence, the keys its queries see at
// all once from HBM, and what its query tiles of l.Tile[0] rows stream
// for each query head beyond that from L2.
func varlenTraffic(n *ir.Node, l *Launch, dims map[string]int64) (hbm, l2 int64, err error) {
	qlens, klens, err := varlenSeqs(n, dims)
	if err != nil {
		return 0, 0, err
	}
	qs, err := n.Args[0].Type.Shape.Eval(dims)
	if err != nil {
		return 0, 0, err
	}
	g, err := n.Args[1].Type.Shape[1].Eval(dims)
	if err != nil {
		return 0, 0, err
	}
	h, dh := int64(qs[0]), int64(qs[2])
	rowBytes := 2 * dh * n.Args[1].Type.DType.Size() // one K row and one V row
	at, br := n.Attr.Attn, max(l.Tile[0], 1)
	for b, sq := range qlens {
		tk := klens[b]
		if sq == 0 {
			continue
		}
		// Causal and window bounds move monotonically with the query, so
		// the keys a tile (or the sequence) sees are one range.
		lo, _ := visibleKeys(at, tk, sq, 0)
		_, hi := visibleKeys(at, tk, sq, sq-1)
		hbm += g * max(hi-lo, 0) * rowBytes
		for start := int64(0); start < sq; start += br {
			tlo, _ := visibleKeys(at, tk, sq, start)
			_, thi := visibleKeys(at, tk, sq, min(start+br, sq)-1)
			l2 += h * max(thi-tlo, 0) * rowBytes
		}
	}
	return hbm, l2 - hbm, nil
}

// varlenFlops counts 4·Dh flops for every (query, visible key) pair of a
// varlen attention node under the model's split.
func varlenFlops(n *ir.Node, dims map[string]int64) (int64, error) {
	qlens, klens, err := varlenSeqs(n, dims)
	if err != nil {
		return 0, err
	}
	qs, err := n.Args[0].Type.Shape.Eval(dims)
	if err != nil {
		return 0, err
	}
	var pairs int64
	for b, sq := range qlens {
		for i := range sq {
			lo, hi := visibleKeys(n.Attr.Attn, klens[b], sq, i)
			var ok bool
			if pairs, ok = intmath.Add(pairs, hi-lo); !ok {
				return 0, fmt.Errorf("FLOPs of attention %w", ir.ErrOverflow)
			}
		}
	}
	return flopsProduct(n, 4, int64(qs[2]), pairs, int64(qs[0]))
}

// varlenCost corrects kernel cost c for varlen attention node n: the
// inputs counted the buffers of K and V whole (each once), the node reads
// what its queries see (varlenTraffic).
func varlenCost(c *Cost, n *ir.Node, l *Launch, dims map[string]int64) error {
	hbm, l2, err := varlenTraffic(n, l, dims)
	if err != nil {
		return err
	}
	seen := map[*ir.Value]bool{}
	for _, kv := range n.Args[1:] {
		for _, src := range Sources(kv) {
			if seen[src] {
				continue
			}
			seen[src] = true
			whole, err := ReadBytes(src, dims)
			if err != nil {
				return err
			}
			c.BytesRead -= whole
		}
	}
	c.BytesRead += hbm
	c.L2Bytes += l2
	return nil
}
