package passes

import "github.com/fuser-dev/fuser/ir"

// attention replaces written attention, softmax(mask(softcap(q·Kᵀ·scale)))·V
// in any order the math allows, with one attention node. Scale, mask
// (causal or sliding window), soft-capping, GQA head groups, paged or ragged
// KV (through the keys' ragged lengths) and a shared-prefix concat (cascade)
// become the node's variant; a bias constant along the keys drops out of
// the softmax, one that varies along them becomes the node's score bias. canonicalize has already brought scales, softmax and
// transposes to one form.
func attention(s *State) (int, error) {
	g := s.Graph
	users := g.Users()
	n := 0
	for _, pv := range append([]*ir.Node(nil), g.Nodes...) {
		if pv.Op != ir.OpMatmul {
			continue
		}
		if pv.Args[0].Def.Op != ir.OpSoftmax {
			explainNotSoftmax(s, pv)
			continue
		}
		node, ok := matchAttention(s, pv, users)
		if !ok {
			continue
		}
		at, err := g.NewNode(ir.OpAttention, ir.Attr{Attn: node.variant}, pv, node.args...)
		if err != nil {
			s.explain(false, "attention at %s: %v", pv.Pos, err)
			continue
		}
		g.ReplaceUses(pv.Outs[0], at.Outs[0])
		s.explain(true, "attention at %s → %s", pv.Pos, at)
		n++
	}
	g.RemoveDead()
	return n, nil
}

type attentionMatch struct {
	variant *ir.Attention
	args    []*ir.Value
}

// matchAttention walks from P·V back to Q·Kᵀ and checks that every step is
// one the flash kernel computes; the first one that is not is explained.
func matchAttention(s *State, pv *ir.Node, users map[*ir.Value][]*ir.Node) (attentionMatch, bool) {
	w := &scoreWalk{at: &ir.Attention{Scale: 1}, where: pv.Pos.String()}
	p := pv.Args[0]
	sm := p.Def
	if sm.Attr.Axis != len(p.Type.Shape)-1 {
		s.explain(false, "softmax→matmul at %s: softmax is not over the keys (last axis)", w.where)
		return attentionMatch{}, false
	}
	single := func(v *ir.Value) bool { return len(users[v]) == 1 }
	if !single(p) {
		s.explain(false, "softmax→matmul at %s: the probabilities %s are read elsewhere, so they must be materialised", w.where, p.Ref())
		return attentionMatch{}, false
	}
	x := sm.Args[0]
	for {
		if !single(x) {
			s.explain(false, "attention at %s: scores %s are read elsewhere", w.where, x.Ref())
			return attentionMatch{}, false
		}
		d := x.Def
		if d.Op == ir.OpMatmul {
			m, ok := matchQK(s, pv, d, w.at, w.where)
			if !ok || w.keyed == nil {
				return m, ok
			}
			return withBias(s, m, w)
		}
		next, ok := w.step(s, d, x)
		if !ok {
			return attentionMatch{}, false
		}
		x = next
	}
}

// withBias appends the walk's key-varying bias to the node's arguments.
// The kernels index it by a key's position in a dense row of the
// sequence's keys, so keys with per-sequence lengths (a paged or ragged
// cache), a cascade's two sources and packed queries are explained
// instead.
func withBias(s *State, m attentionMatch, w *scoreWalk) (attentionMatch, bool) {
	if m.variant.Varlen {
		s.explain(false, "attention at %s: the bias %s over packed queries: the varlen attention kernel takes no bias", w.where, w.keyed.Ref())
		return attentionMatch{}, false
	}
	if m.variant.Cascade {
		s.explain(false, "attention at %s: the bias %s over a cascade's shared prefix and own keys: the cascade kernels take no bias", w.where, w.keyed.Ref())
		return attentionMatch{}, false
	}
	for _, kv := range m.args[1:] {
		if kv.Ragged != nil {
			s.explain(false, "attention at %s: the bias %s over keys %s of per-sequence lengths (a paged or ragged cache): the attention kernels index a bias by a key's position in a dense row", w.where, w.keyed.Ref(), kv.Ref())
			return attentionMatch{}, false
		}
	}
	m.args = append(m.args, w.keyed)
	return m, true
}

// explainNotSoftmax explains a P·V candidate, a matmul of two stacks of
// matrices whose left operand is computed from an exp but is not a
// softmax: it names the op that is not exp(s) / sum(exp(s)).
func explainNotSoftmax(s *State, pv *ir.Node) {
	p := pv.Args[0]
	if len(p.Type.Shape) != 4 || len(pv.Args[1].Type.Shape) != 4 || !readsExp(p, 3) {
		return
	}
	d := p.Def
	if d.Op == ir.OpDiv && d.Args[0].Def.Op == ir.OpExp && d.Args[1].Def.Op == ir.OpSum && d.Args[1].Def.Args[0] != d.Args[0] {
		s.explain(false, "softmax→matmul at %s: %s divides %s by %s, a sum of %s, not of the exponentials themselves: not a softmax", pv.Pos, p.Ref(), d.Args[0].Ref(), d.Args[1].Ref(), d.Args[1].Def.Args[0].Ref())
		return
	}
	s.explain(false, "softmax→matmul at %s: the probabilities %s are %s, not softmax(s) or exp(s) / sum(exp(s)) over the keys", pv.Pos, p.Ref(), d.Op)
}

// readsExp reports whether v is computed from an exp within depth ops.
func readsExp(v *ir.Value, depth int) bool {
	if v.Def.Op == ir.OpExp {
		return true
	}
	if depth == 0 {
		return false
	}
	for _, a := range v.Def.Args {
		if readsExp(a, depth-1) {
			return true
		}
	}
	return false
}
