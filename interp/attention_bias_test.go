package interp

import (
	"fmt"
	"math"
	"testing"

	"github.com/fuser-dev/fuser/ir"
)

// TestAttentionNodeBias checks the fused attention op with a score bias
// varying along the keys against the written attention it replaces, at
// odd sizes (6 query heads over 2 kv heads, 3 sequences, 10 cached tokens,
// 1 and 7 queries): a bias a sequence and query shared by the heads, and
// one a head shared by the sequences and queries, subtracted inside
// softcap under a scale written after it (BiasScale -3/√8).
func TestAttentionNodeBias(t *testing.T) {
	for _, c := range []struct {
		name, decl, score string
		at                ir.Attention
	}{
		{"sequences", "input kb : f32[B, 1, S, T + S]", "causal(s + kb)",
			ir.Attention{Scale: 1 / math.Sqrt(8), Causal: true, Bias: true, BiasScale: 1}},
		{"heads_softcap", "input kb : f32[H, 1, T + S]", "window(softcap((s * sqrt(Dh) - kb) / sqrt(Dh) * 3, 2), 4)",
			ir.Attention{Scale: 3 / math.Sqrt(8), Causal: true, Window: ir.Const(4), Softcap: 2, Bias: true, BiasScale: -3 / math.Sqrt(8)}},
	} {
		g := build(t, subst(attnSpec, "dims", "", "extra", c.decl, "layout", "", "score", c.score))
		ap := appendNode(t, g)
		leaf := map[string]*ir.Value{}
		for _, n := range g.Nodes {
			if n.Op == ir.OpInput {
				leaf[n.Outs[0].Name] = n.Outs[0]
			}
		}
		at := c.at
		n := &ir.Node{Op: ir.OpAttention, Args: []*ir.Value{leaf["q"], ap.Outs[0], ap.Outs[1], leaf["kb"]}, Attr: ir.Attr{Attn: &at}}
		out := &ir.Value{ID: 100000, Name: "fused", Type: leaf["q"].Type, Def: n}
		n.Outs = []*ir.Value{out}
		g.Nodes = append(g.Nodes, n)
		g.Outputs = append(g.Outputs, out)
		for _, S := range []int64{1, 7} {
			t.Run(fmt.Sprintf("%s/S=%d", c.name, S), func(t *testing.T) {
				in, full := setup(t, g, map[string]int64{"B": 3, "S": S, "T": 10}, S)
				res := run(t, g, full, in)
				if e := relErr(res.Outputs["fused"].Data, res.Outputs["o"].Data); !(e <= 1e-12) {
					t.Fatalf("fused against written: relative error %.3g", e)
				}
			})
		}
	}
}
