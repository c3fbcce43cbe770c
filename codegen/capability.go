package codegen

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// FlashMaxDh is the largest head dim the tensor-core attention kernels
// take (the output accumulators of a 16-row tile live in registers).
const FlashMaxDh = 256

// PermutedStoreMaxDh is the largest head dim whose attention kernels can
// store their output in a permuted order (the layout pass asks it): the
// head-dim-256 kernels hold up to 255 registers already
// (codegen/cuda/testdata/ptxas.txt), and Gemma-2's windowed, soft-capped
// one spilled with the permuted store's addressing.
const PermutedStoreMaxDh = 128

// FlashAttention reports whether the tensor-core attention kernels
// (codegen/cuda's fz_att_decode, fz_att_prefill and the prefix pass) can
// compute attention node n, and why not: 16-bit queries, keys and values
// of one dtype, a constant head dim up to FlashMaxDh, query heads a
// constant multiple of the kv heads, keys and values ragged along their
// token axis only, each key a row or stored transposed ([B, G, Dh, T]:
// the decode and the mma.sync prefill read those, the wgmma prefill does
// not: WGMMAPrefill); a score bias of any float dtype, dense; queries
// [B, H, S, Dh], not packed tokens (Varlen). The launch pass
// asks it before choosing a variant, so that a kernel codegen cannot write
// is never planned and the CUDA-core fallback is a recorded decision;
// codegen/cuda refuses by the same rule.
func FlashAttention(n *ir.Node) error {
	if n.Op != ir.OpAttention || n.Attr.Attn == nil {
		return fmt.Errorf("%s is not an attention node", n.Op)
	}
	want := 3
	if n.Attr.Attn.Cascade {
		want = 5
	}
	if n.Attr.Attn.Bias {
		want++
	}
	if len(n.Args) != want {
		return fmt.Errorf("%d arguments, want %d", len(n.Args), want)
	}
	if n.Attr.Attn.Varlen {
		return fmt.Errorf("packed queries (varlen): the tensor-core kernels take queries [B, H, S, Dh], a tile of one sequence's rows")
	}
	q := n.Args[0]
	qs := q.Type.Shape
	if len(qs) != 4 {
		return fmt.Errorf("queries of shape %v: want [B, H, S, Dh]", qs)
	}
	if dh, ok := qs[3].Value(); !ok || dh < 1 || dh > FlashMaxDh {
		return fmt.Errorf("head dim %v: want a constant from 1 to %d", qs[3], FlashMaxDh)
	}
	own := n.KeyRows(n.AttentionKeys())
	if len(own) != 4 {
		return fmt.Errorf("keys of shape %v: want [B, G, T, Dh]", own)
	}
	grp, ok := qs[1].DivExact(own[1])
	if g, okg := grp.Value(); !ok || !okg || g < 1 {
		return fmt.Errorf("the query heads %v must be a constant multiple of the kv heads %v", qs[1], own[1])
	}
	dt := q.Type.DType
	if dt != ir.BF16 && dt != ir.F16 {
		return fmt.Errorf("queries of dtype %s: the tensor-core kernels take bf16 or f16", dt)
	}
	for i, v := range n.AttentionKV() {
		vs := v.Type.Shape
		if i%2 == 0 {
			vs = n.KeyRows(v)
		}
		if v.Type.DType != dt {
			return fmt.Errorf("%s has dtype %s, the queries %s", v.Ref(), v.Type.DType, dt)
		}
		if len(vs) != 4 || !vs[3].Equal(qs[3]) || !vs[1].Equal(own[1]) || !(vs[0].Equal(qs[0]) || isOne(vs[0])) {
			return fmt.Errorf("keys or values %s of shape %v for queries %v", v.Ref(), vs, qs)
		}
		if r := v.Ragged; r != nil && (r.Axis != 2 || r.Batch > 0) {
			return fmt.Errorf("%s is ragged along axis %d (batch axis %d): only the token axis of a sequence may be", v.Ref(), r.Axis, r.Batch)
		}
	}
	if b := n.AttentionBias(); b != nil && b.Ragged != nil {
		return fmt.Errorf("the bias %s has per-sequence lengths", b.Ref())
	}
	return nil
}

// WGMMAPrefill reports whether the wgmma prefill (codegen/cuda's
// fz_att_prefill_wg) can compute attention node n, which FlashAttention
// takes, and why not: its tensor maps and shared layouts take keys as
// rows, not stored transposed (the mma.sync prefill reads those).
func WGMMAPrefill(n *ir.Node) error {
	if n.Attr.Attn.KeysT {
		return fmt.Errorf("keys stored transposed, [B, G, Dh, T]: its tensor maps stage keys as rows of Dh elements")
	}
	return nil
}

func isOne(d ir.Dim) bool {
	v, ok := d.Value()
	return ok && v == 1
}
