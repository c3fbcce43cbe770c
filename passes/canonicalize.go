package passes

import (
	"fmt"
	"math"
	"slices"

	"github.com/fuser-dev/fuser/ir"
)

// rewrite tries one normal-form rule on node d; it reports whether it
// rewrote the graph. users is the graph's use map at the time of the call.
type rewrite func(s *State, d *ir.Node, users map[*ir.Value][]*ir.Node) (bool, error)

// canonicalRules are the normal forms, in the order they are applied: each
// rule runs to its fixed point over the graph before the next starts.
var canonicalRules = []rewrite{
	constOnRight,     // c * x → x * c
	divByConst,       // x / c → x * (1/c)
	reciprocalToDiv,  // x * (1 / y) → x / y
	composeTranspose, // transpose(transpose(x)) → transpose(x); identity transposes and reshapes go
	scaleOutward,     // a scalar scale moves past transpose, reshape, rope and matmul
	softmaxForm,      // exp(x - max(x)) / sum(...) and exp(x) / sum(exp(x)) → softmax(x)
	softmaxShift,     // softmax(x - b) → softmax(x) for b constant along the axis
}

// maxCanonicalRounds bounds the rounds over every rule; each round that
// changes the graph moves scales outward or removes nodes, so a few suffice.
const maxCanonicalRounds = 16

// canonicalize rewrites the graph into normal forms the later passes match,
// so that every way of writing one computation reaches the same graph:
//   - a scalar constant is the right operand of a product, x / c is
//     x * (1/c) and x * (1 / y) is x / y;
//   - nested transposes are one; transposes and reshapes that change
//     nothing are removed;
//   - a scalar scale on an operand of a matmul (the query, the keys, or
//     split between them), also when written before a transpose, reshape or
//     rope of it, becomes a scale of the matmul's result;
//   - exp(x - max(x)) / sum(...) and exp(x) / sum(exp(x)) over one axis
//     become softmax(x), and a shift constant along the axis leaves a
//     softmax;
//   - common subexpressions are merged and dead nodes removed.
func canonicalize(s *State) (int, error) {
	changes := 0
	for range maxCanonicalRounds {
		n := cse(s.Graph)
		for _, rule := range canonicalRules {
			k, err := rewriteAll(s, rule)
			if err != nil {
				return changes, err
			}
			n += k
		}
		n += cse(s.Graph)
		n += s.Graph.RemoveDead()
		changes += n
		if n == 0 {
			return changes, nil
		}
	}
	return changes, fmt.Errorf("the graph did not reach a normal form in %d rounds", maxCanonicalRounds)
}

// rewriteAll applies rule to the first node, in graph order, it rewrites,
// until it rewrites none, and returns how many rewrites it made. Starting
// over after each rewrite keeps the use counts exact.
func rewriteAll(s *State, rule rewrite) (int, error) {
	n := 0
	for {
		users := s.Graph.Users()
		fired := false
		for _, d := range s.Graph.Nodes {
			ok, err := rule(s, d, users)
			if err != nil {
				return n, err
			}
			if ok {
				fired = true
				break
			}
		}
		if !fired {
			return n, nil
		}
		n++
		s.Graph.RemoveDead()
	}
}

// constValue returns the value of a scalar constant.
func constValue(v *ir.Value) (float64, bool) {
	if v.Def.Op == ir.OpConst {
		return v.Def.Attr.Num, true
	}
	return 0, false
}

// cse merges nodes with the same op, arguments and attributes. A node that
// computes a graph output is never merged into an earlier one: the output
// would lose its name, or two outputs would become one value.
func cse(g *ir.Graph) int {
	seen := map[string]*ir.Node{}
	outputs := map[*ir.Value]bool{}
	for _, o := range g.Outputs {
		outputs[o] = true
	}
	n := 0
	for _, nd := range g.Nodes {
		if nd.Op.IsLeaf() || nd.Op == ir.OpAppend {
			continue
		}
		key := nd.Op.String()
		for _, a := range nd.Args {
			key += fmt.Sprintf(" %d", a.ID)
		}
		key += " " + attrKey(nd)
		prev, ok := seen[key]
		if ok && !slices.ContainsFunc(nd.Outs, func(o *ir.Value) bool { return outputs[o] }) {
			for i, o := range nd.Outs {
				g.ReplaceUses(o, prev.Outs[i])
			}
			n++
			continue
		}
		if !ok {
			seen[key] = nd
		}
	}
	return n
}

// attrKey prints the attributes that distinguish nodes of one op, with the
// dtype of constants.
func attrKey(n *ir.Node) string {
	a := n.Attr
	key := fmt.Sprintf("%d %v %s %s %s %x %d %s %d", a.Axis, a.Perm, shapeKey(a.Sizes), a.Start, a.End, math.Float64bits(a.Num), a.K, a.W, a.To)
	if at := a.Attn; at != nil {
		key += fmt.Sprintf(" %v", *at)
	}
	return key
}

func shapeKey(ds []ir.Dim) string { return ir.Shape(ds).String() }
