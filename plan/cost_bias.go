package plan

import (
	"fmt"

	"github.com/fuser-dev/fuser/internal/intmath"
	"github.com/fuser-dev/fuser/ir"
)

// biasTraffic models the reads of an attention node's score bias: the
// kernels read a bias element for each score they keep (the keys the mask
// leaves each query; none for a masked score), so reads is one element per
// visible (query, key) pair of every sequence and head. HBM serves each
// distinct element once, hbm: a broadcast axis (a bias shared by the
// sequences, heads or queries) is not read again from HBM, and elements
// no query sees (the keys after the last query under a causal mask) not at
// all; L2 serves the rest, reads - hbm. Both are bytes.
func biasTraffic(n *ir.Node, dims map[string]int64) (hbm, l2 int64, err error) {
	bias := n.AttentionBias()
	q, err := n.Args[0].Type.Shape.Eval(dims)
	if err != nil {
		return 0, 0, err
	}
	bs, err := ir.BiasShape(bias).Eval(dims)
	if err != nil {
		return 0, 0, err
	}
	b, h, sq, tk := int64(q[0]), int64(q[1]), int64(q[2]), int64(bs[3])
	at := n.Attr.Attn
	win := int64(0)
	if w, ok := at.Window.Value(); ok {
		win = w
	}
	// The visible keys [lo, hi) of each query; their count, and the length
	// of their union (the ranges move right with the query).
	var count, union, end int64
	for i := range sq {
		pos := tk - sq + i
		lo, hi := int64(0), tk
		if at.Causal {
			hi = min(tk, pos+1)
		}
		if win > 0 {
			lo = max(0, pos-win+1)
		}
		if hi <= lo {
			continue
		}
		count += hi - lo
		union += hi - max(lo, end)
		end = hi
	}
	rows := union
	if int64(bs[2]) != 1 || sq == 1 {
		rows = count
	}
	size := bias.Type.DType.Size()
	reads, ok := mulAll(b, h, count, size)
	distinct, ok2 := mulAll(int64(bs[0]), int64(bs[1]), rows, size)
	if !ok || !ok2 {
		return 0, 0, fmt.Errorf("bias bytes of attention %w", ir.ErrOverflow)
	}
	return distinct, reads - distinct, nil
}

// mulAll is the product of xs, false past int64.
func mulAll(xs ...int64) (int64, bool) {
	p := int64(1)
	for _, x := range xs {
		var ok bool
		if p, ok = intmath.Mul(p, x); !ok {
			return 0, false
		}
	}
	return p, true
}
