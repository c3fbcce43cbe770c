package interp

import (
	"fmt"
	"math"
	"testing"

	"github.com/fuser-dev/fuser/ir"
)

// TestAttentionNode checks the fused attention op (ir.OpAttention) against
// the written attention it replaces, for each variant and a paged cache.
func TestAttentionNode(t *testing.T) {
	for _, va := range variants {
		for _, layout := range []string{"", pagedLayout(4)} {
			extra, dims := "", ""
			if layout != "" {
				extra, dims = pagedExtra, ", P, N"
			}
			g := build(t, subst(attnSpec, "dims", dims, "extra", extra, "layout", layout, "score", va.score))
			ap := appendNode(t, g)
			var qv *ir.Value
			for _, n := range g.Nodes {
				if n.Op == ir.OpInput && n.Outs[0].Name == "q" {
					qv = n.Outs[0]
				}
			}
			at := &ir.Attention{Scale: 1 / math.Sqrt(8), Causal: va.opts.causal}
			if va.opts.window > 0 {
				at.Window = ir.Const(int64(va.opts.window))
			}
			if va.opts.softcap != 0 {
				at.Scale *= 20
				at.Softcap = va.opts.softcap
			}
			n := &ir.Node{Op: ir.OpAttention, Args: []*ir.Value{qv, ap.Outs[0], ap.Outs[1]}, Attr: ir.Attr{Attn: at}}
			out := &ir.Value{ID: 100000, Name: "fused", Type: qv.Type, Def: n}
			n.Outs = []*ir.Value{out}
			g.Nodes = append(g.Nodes, n)
			g.Outputs = append(g.Outputs, out)
			for _, S := range []int64{1, 7} {
				t.Run(fmt.Sprintf("%s/%q/S=%d", va.name, layout, S), func(t *testing.T) {
					in, full := setup(t, g, map[string]int64{"B": 3, "S": S, "T": 10}, S)
					res := run(t, g, full, in)
					close(t, "fused", res.Outputs["fused"], res.Outputs["o"].Data)
				})
			}
		}
	}
}
