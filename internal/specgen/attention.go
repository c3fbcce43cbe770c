package specgen

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// scoreForms write the scores of q (%[1]s) against the keys K (%[2]s) with
// the scale 1/sqrt({dh}) and a mask around the part between {m} and {/m}, in
// the ways the attention matcher accepts: the scale on the scores, on q, on
// K or split, before or after the mask, a constant bias, the keys
// transposed in one step or in a permutation; and one it refuses (tanh of
// the scores).
var scoreForms = []string{
	"{m}%[1]s @ transpose(%[2]s) / sqrt({dh}){/m}",
	"{m}(%[1]s * rsqrt({dh})) @ transpose(%[2]s){/m}",
	"{m}(%[1]s / sqrt({dh})) @ transpose(%[2]s){/m}",
	"{m}%[1]s @ transpose(%[2]s / sqrt({dh})){/m}",
	"{m}(%[1]s * rsqrt(sqrt({dh}))) @ transpose(%[2]s * rsqrt(sqrt({dh}))){/m}",
	"{m}%[1]s @ transpose(%[2]s){/m} / sqrt({dh})",
	"{m}%[1]s @ transpose(%[2]s, [0, 1, 3, 2]) / sqrt({dh}){/m}",
	"{m}%[1]s @ transpose(%[2]s) / sqrt({dh}) + 3{/m}",
	"{m}tanh(%[1]s @ transpose(%[2]s)){/m}",
}

// masks are what {m} and {/m} become: causal, a sliding window of {w}
// keys, no mask, a soft cap under the causal mask.
var masks = [][2]string{{"causal(", ")"}, {"window(", ", {w})"}, {"(", ")"}, {"causal(softcap(", ", 2))"}}

// probForms turn the scores P into the attention output against V (%[1]s):
// softmax as a call, written out safe, plain, with a reciprocal.
var probForms = []string{
	"softmax(P, axis=-1) @ %[1]s",
	"(exp(P - max(P, axis=-1)) / sum(exp(P - max(P, axis=-1)), axis=-1)) @ %[1]s",
	"(exp(P) / sum(exp(P), axis=-1)) @ %[1]s",
	"(exp(P) * (1 / sum(exp(P), axis=-1))) @ %[1]s",
}

// attention adds a multi-head attention with H query heads over G kv
// heads of Dh: q, k and v projected from an activation [B, S, n] (rope on
// q and k, often) or fresh inputs, the keys appended to a KV cache (once
// per spec) or the step's own, and the scores written in one of the forms.
func (g *gen) attention() bool {
	grp := int64(1 + g.src.IntN(2))
	h := grp * int64(1+g.src.IntN(3))
	dh := []int64{2, 4, 8}[g.src.IntN(3)]
	b, s := ir.Sym("B"), ir.Sym("S")
	heads := func(n int64) ir.Shape { return ir.Shape{b, ir.Const(n), s, ir.Const(dh)} }
	var q, k, v *value
	x := g.operand(g.dt)
	if len(x.shape) == 3 && x.shape[0].Equal(b) && x.shape[1].Equal(s) && isConst(x.shape[2]) && !g.coin(4) {
		w := g.leaf("param", x.dt, ir.Shape{x.shape[2], ir.Const((h + 2*grp) * dh)})
		parts := g.bindMany(x.dt, []ir.Shape{
			{b, s, ir.Const(h * dh)}, {b, s, ir.Const(grp * dh)}, {b, s, ir.Const(grp * dh)},
		}, fmt.Sprintf("split(%%s @ %%s, [%d, %d, %d], axis=-1)", h*dh, grp*dh, grp*dh), x, w)
		rope := g.coin(2)
		toHeads := func(p *value, n int64, rotate bool) *value {
			if rotate {
				return g.bind(x.dt, heads(n), fmt.Sprintf("transpose(rope(reshape(%%s, [B, S, %d, %d]), %%s), [0, 2, 1, 3])", n, dh), p, g.positions())
			}
			return g.bind(x.dt, heads(n), fmt.Sprintf("transpose(reshape(%%s, [B, S, %d, %d]), [0, 2, 1, 3])", n, dh), p)
		}
		q, k, v = toHeads(parts[0], h, rope), toHeads(parts[1], grp, rope), toHeads(parts[2], grp, false)
	} else {
		if x.leaf && !x.used {
			g.unary(x)
		}
		q, k, v = g.leaf("input", g.dt, heads(h)), g.leaf("input", g.dt, heads(grp)), g.leaf("input", g.dt, heads(grp))
	}
	keys, vals := k, v
	if !g.cache && g.coin(2) {
		g.cache = true
		kv := g.leaf("state", q.dt, ir.Shape{ir.Const(2), b, ir.Const(grp), ir.Sym("T"), ir.Const(dh)})
		tk := ir.Shape{b, ir.Const(grp), ir.Sym("T").Add(s), ir.Const(dh)}
		kvs := g.bindMany(q.dt, []ir.Shape{tk, tk}, "append(%s, %s, %s)", kv, k, v)
		keys, vals = kvs[0], kvs[1]
	}
	m := masks[g.src.IntN(len(masks))]
	score := strings.NewReplacer("{m}", m[0], "{/m}", m[1]).Replace(scoreForms[g.src.IntN(len(scoreForms))])
	score = strings.NewReplacer("{dh}", fmt.Sprint(dh), "{w}", fmt.Sprint(1+g.src.IntN(5))).Replace(score)
	expr := strings.ReplaceAll(fmt.Sprintf(probForms[g.src.IntN(len(probForms))], "%[3]s"), "P", score)
	a := g.bind(q.dt, heads(h), expr, q, keys, vals)
	if g.coin(3) {
		return true
	}
	g.bind(q.dt, ir.Shape{b, s, ir.Const(h * dh)}, fmt.Sprintf("reshape(transpose(%%s, [0, 2, 1, 3]), [B, S, %d])", h*dh), a)
	return true
}

func isConst(d ir.Dim) bool {
	_, ok := d.Value()
	return ok
}
