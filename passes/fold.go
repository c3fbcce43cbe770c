package passes

import "github.com/fuser-dev/fuser/ir"

// fold moves every op computed from params and constants only (Gemma's
// 1 + w on a norm weight, a weight scale, the concatenation of sibling
// weights) into the load stage: kernels that run once after the weights
// are loaded, whose results the step reads as it reads params. Views of
// such values stay views, read with strides by the step; ops of constants
// alone are canonicalize's to fold.
func fold(s *State) (int, error) {
	changes := 0
	memo := map[*ir.Value]bool{}
	for _, n := range s.Graph.Nodes {
		if !s.assignable(n) || !fromParams(n, memo) {
			continue
		}
		k := s.newKernel(strategyOf(n), n)
		k.Load = true
		s.explain(true, "fold %s %s: computed from params and constants only, once at load", n.Op, n.Outs[0].Ref())
		changes++
	}
	return changes, nil
}

// fromParams reports whether every value n reads comes from params and
// constants alone, with at least one param among them.
func fromParams(n *ir.Node, memo map[*ir.Value]bool) bool {
	if n.Op == ir.OpAppend || n.Op == ir.OpSeqLens || n.Attr.Layout != nil {
		return false
	}
	param := false
	for _, a := range n.Args {
		switch {
		case a.Def.Op == ir.OpParam:
			param = true
		case a.Def.Op == ir.OpConst:
		case a.Def.Op.IsLeaf():
			return false
		default:
			if !valueFromParams(a, memo) {
				return false
			}
			param = true
		}
	}
	return param
}

// valueFromParams reports whether a computed value depends on params and
// constants only, at least one param.
func valueFromParams(v *ir.Value, memo map[*ir.Value]bool) bool {
	if r, ok := memo[v]; ok {
		return r
	}
	r := fromParams(v.Def, memo)
	memo[v] = r
	return r
}
