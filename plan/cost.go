package plan

import (
	"fmt"

	"github.com/fuser-dev/fuser/internal/intmath"
	"github.com/fuser-dev/fuser/ir"
)

// Cost is the modelled work of one kernel at bound dims.
type Cost struct {
	Kernel   string
	Strategy Strategy
	// BytesRead and BytesWritten are compulsory HBM traffic: every input read
	// once, every output written once, plus the split-K and split-KV
	// partials, written to HBM once L2 evicts them. A KV cache read by
	// attention counts every cached token; its score bias the elements
	// some query sees (biasTraffic).
	BytesRead, BytesWritten int64
	// L2Bytes is traffic the model expects L2 to serve: K/V tiles re-streamed
	// for every query block of a prefill attention kernel beyond the first,
	// the partials' reads, which follow their writes in the same launch
	// (ncu read every split GEMV's and the decode attention's weights or
	// keys and inputs from DRAM within 0.5%, and none of their partials:
	// bench/results/2026-12-06-split-epilogue), and an attention bias
	// read again for another sequence, head or query (biasTraffic).
	L2Bytes  int64
	Flops    int64
	Launches int
	// Load marks a kernel of the load stage, which runs once, not every
	// step: Total leaves it out and LoadTotal sums it.
	Load bool `json:",omitempty"`
}

// Bytes is the kernel's HBM traffic.
func (c Cost) Bytes() int64 { return c.BytesRead + c.BytesWritten }

// Costs models every kernel of the plan at bound dims. Kernels need their
// launch (the launch pass) for split and tile counts.
func (p *Plan) Costs(dims map[string]int64) ([]Cost, error) {
	out := make([]Cost, 0, len(p.Kernels))
	for _, k := range p.Kernels {
		c, err := kernelCost(k, dims)
		if err != nil {
			return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// Total sums the costs of the step's kernels (the load stage's are left
// out).
func Total(cs []Cost) Cost { return sum(cs, false, "total") }

// LoadTotal sums the costs of the load stage's kernels.
func LoadTotal(cs []Cost) Cost { return sum(cs, true, "load total") }

// sum adds the costs of the kernels of one stage.
func sum(cs []Cost, load bool, name string) Cost {
	t := Cost{Kernel: name, Load: load}
	for _, c := range cs {
		if c.Load != load {
			continue
		}
		t.BytesRead += c.BytesRead
		t.BytesWritten += c.BytesWritten
		t.L2Bytes += c.L2Bytes
		t.Flops += c.Flops
		t.Launches += c.Launches
	}
	return t
}

func kernelCost(k *Kernel, dims map[string]int64) (Cost, error) {
	if k.Launch == nil {
		return Cost{}, fmt.Errorf("no launch plan (bind the dims)")
	}
	c := Cost{Kernel: k.Name, Strategy: k.Strategy, Launches: k.Launch.Launches, Load: k.Load}
	for _, in := range k.Inputs {
		b, err := ReadBytes(in, dims)
		if err != nil {
			return c, err
		}
		c.BytesRead += b
	}
	for _, o := range k.Outputs {
		if InCache(o) {
			continue // the append below writes only the new tokens
		}
		b, err := Bytes(o, dims)
		if err != nil {
			return c, err
		}
		c.BytesWritten += b
	}
	for _, n := range k.Nodes {
		f, err := nodeFlops(n, dims)
		if err != nil {
			return c, err
		}
		var ok bool
		if c.Flops, ok = intmath.Add(c.Flops, f); !ok {
			return c, fmt.Errorf("kernel %s: FLOPs %w", k.Name, ir.ErrOverflow)
		}
		switch n.Op {
		case ir.OpAppend:
			for _, a := range n.Args[1:] {
				b, err := Bytes(a, dims)
				if err != nil {
					return c, err
				}
				c.BytesWritten += b
			}
		case ir.OpMatmul:
			partials := splitKPartials(k.Launch)
			c.BytesWritten += partials
			c.L2Bytes += partials
		case ir.OpAttention:
			if n.Attr.Attn.Varlen {
				if err := varlenCost(&c, n, k.Launch, dims); err != nil {
					return c, err
				}
				continue
			}
			partials, l2, err := attentionExtra(n, k.Launch, dims)
			if err != nil {
				return c, err
			}
			c.BytesWritten += partials
			c.L2Bytes += partials + l2
			if bias := n.AttentionBias(); bias != nil {
				// The inputs above counted the whole bias.
				whole, err := Bytes(bias, dims)
				if err != nil {
					return c, err
				}
				hbm, l2, err := biasTraffic(n, dims)
				if err != nil {
					return c, err
				}
				c.BytesRead += hbm - whole
				c.L2Bytes += l2
			}
		}
	}
	return c, nil
}

// splitKPartials models a split-K GEMV's partial sums: its workspace (one
// f32 per row, column and split), written by the splits and read once,
// from L2, by the split that sums each element and runs its epilogue.
func splitKPartials(l *Launch) int64 {
	if l.Variant != VariantGemv {
		return 0
	}
	return l.WorkspaceFloats * 4
}

// attentionExtra models the split-KV partials (f32 output row plus max and
// sum per query head and split, written by the splits and read from L2 by
// the merge; a cascade's prefix pass writes one per query head and prefix
// split) and, for prefill, the K/V bytes re-streamed per query block.
func attentionExtra(n *ir.Node, l *Launch, dims map[string]int64) (partials, l2 int64, err error) {
	sh, err := n.Args[0].Type.Shape.Eval(dims)
	if err != nil {
		return 0, 0, err
	}
	b, h, sq, d := int64(sh[0]), int64(sh[1]), int64(sh[2]), int64(sh[3])
	kv, err := n.KeyRows(n.AttentionKeys()).Eval(dims)
	if err != nil {
		return 0, 0, err
	}
	tk := int64(kv[2])
	if l.Variant.Decode() {
		parts := l.Splits
		switch {
		case l.PrefixSplits > 0:
			parts = l.PrefixSplits + ownSplits(n, l, tk, sq)
		case n.Attr.Attn.Cascade && l.Launches > 1 && l.Variant == VariantDecodeSIMT:
			parts++ // the CUDA-core kernel's prefix partial
		}
		if parts > 1 {
			partials = b * h * sq * parts * (d + 2) * 4
		}
		return partials, 0, nil
	}
	br := l.Tile[0]
	rowBytes := 2 * d * n.Args[0].Type.DType.Size() // one K row and one V row
	var streamed int64
	for start := int64(0); start < sq; start += br {
		last := min(start+br, sq) - 1
		hi, lo := tk, int64(0)
		if n.Attr.Attn.Causal {
			hi = min(tk, tk-sq+last+1) // causal tile skipping
		}
		if w, ok := n.Attr.Attn.Window.Value(); ok && w > 0 {
			lo = max(0, tk-sq+start-w+1) // keys before the window of the block's first query
		}
		streamed += max(hi-lo, 0) * rowBytes
	}
	return 0, b*h*streamed - b*h*tk*rowBytes/groupOf(n), nil
}

// ownSplits is the split count of the own keys (own of them, the last sq
// the queries) of a cascade decode after its prefix pass, as the decode
// kernel divides the keys the queries see (DecodeSplit): the grid's splits
// have a slot each.
func ownSplits(n *ir.Node, l *Launch, own, sq int64) int64 {
	vis := own
	if w, ok := n.Attr.Attn.Window.Value(); ok && w > 0 {
		vis = min(vis, sq+w-1)
	}
	splits, _ := DecodeSplit(vis, l.Grid[0], l.SplitKeys, l.Grid[0])
	return splits
}

// groupOf is the number of query heads per kv head of an attention node.
func groupOf(n *ir.Node) int64 {
	return ir.GroupSize(n.Args[0].Type.Shape[1], n.Args[1].Type.Shape[1])
}

// nodeFlops counts the arithmetic of one op: 2·M·N·K for a matmul,
// 4·Dh per (query, visible key) pair for attention, the op's per-element
// cost times the elements otherwise. A count past int64 is ir.ErrOverflow.
func nodeFlops(n *ir.Node, dims map[string]int64) (int64, error) {
	out, err := n.Outs[0].Type.Shape.NumElements().Eval(dims)
	if err != nil {
		return 0, err
	}
	switch n.Op {
	case ir.OpMatmul:
		a := n.Args[0].Type.Shape
		k, err := a[len(a)-1].Eval(dims)
		if err != nil {
			return 0, err
		}
		return flopsProduct(n, 2, out, k)
	case ir.OpAttention:
		if n.Attr.Attn.Varlen {
			return varlenFlops(n, dims)
		}
		return attentionFlops(n, dims)
	}
	per := int64(n.Op.Info().Flops)
	if n.Op.Info().Pattern == ir.Reduction {
		in, err := n.Args[0].Type.Shape.NumElements().Eval(dims)
		if err != nil {
			return 0, err
		}
		return flopsProduct(n, per, in)
	}
	return flopsProduct(n, per, out)
}

// flopsProduct multiplies an op's FLOP factors, or says that the count
// overflows int64.
func flopsProduct(n *ir.Node, factors ...int64) (int64, error) {
	p := int64(1)
	for _, f := range factors {
		var ok bool
		if p, ok = intmath.Mul(p, f); !ok {
			return 0, fmt.Errorf("FLOPs of %s %w", n.Op, ir.ErrOverflow)
		}
	}
	return p, nil
}

// attentionFlops counts 4·Dh flops (QKᵀ and PV) for every visible
// (query, key) pair: causal and window masks skip the rest.
func attentionFlops(n *ir.Node, dims map[string]int64) (int64, error) {
	q, err := n.Args[0].Type.Shape.Eval(dims)
	if err != nil {
		return 0, err
	}
	tk := int64(0)
	kvs := n.AttentionKV()
	for i := 0; i < len(kvs); i += 2 {
		s, err := n.KeyRows(kvs[i]).Eval(dims)
		if err != nil {
			return 0, err
		}
		tk += int64(s[2])
	}
	b, h, sq, d := int64(q[0]), int64(q[1]), int64(q[2]), int64(q[3])
	at := n.Attr.Attn
	var pairs int64
	for i := int64(0); i < sq; i++ {
		visible := tk
		if at.Causal {
			visible = tk - sq + i + 1
		}
		if w, ok := at.Window.Value(); ok && w > 0 {
			visible = min(visible, w)
		}
		var ok bool
		if pairs, ok = intmath.Add(pairs, max(visible, 0)); !ok {
			return 0, fmt.Errorf("FLOPs of attention %w", ir.ErrOverflow)
		}
	}
	return flopsProduct(n, 4, d, pairs, b, h)
}

// Floor is the least traffic any plan of the graph moves at bound dims:
// every param, input and cached token read once, the new tokens and the
// outputs written once.
func Floor(g *ir.Graph, dims map[string]int64) (int64, error) {
	var total int64
	add := func(vs ...*ir.Value) error {
		for _, v := range vs {
			b, err := Bytes(v, dims)
			if err != nil {
				return err
			}
			total += b
		}
		return nil
	}
	if err := add(g.Params...); err != nil {
		return 0, err
	}
	if err := add(g.Inputs...); err != nil {
		return 0, err
	}
	if err := add(g.Outputs...); err != nil {
		return 0, err
	}
	for _, n := range g.Nodes {
		if n.Op == ir.OpAppend {
			for _, o := range n.Outs {
				b, err := ReadBytes(o, dims)
				if err != nil {
					return 0, err
				}
				total += b
			}
			if err := add(n.Args[1:]...); err != nil {
				return 0, err
			}
		}
	}
	return total, nil
}
