package ir

import "fmt"

// Verify checks the graph's invariants: nodes in topological order, every
// value defined once by the node that lists it, every non-leaf node's types
// equal to what Infer computes from its arguments, and outputs defined in the
// graph. Passes run it after every change.
func (g *Graph) Verify() error {
	defined := map[*Value]bool{}
	ids := map[int]bool{}
	for i, n := range g.Nodes {
		for _, a := range n.Args {
			if !defined[a] {
				return fmt.Errorf("node %d (%s): argument %s is not defined before it", i, n.Op, a.Ref())
			}
		}
		if n.Attr.Layout != nil {
			for _, a := range []*Value{n.Attr.Layout.Indptr, n.Attr.Layout.Indices, n.Attr.Layout.Last} {
				if a != nil && !defined[a] {
					return fmt.Errorf("node %d (%s): layout input %s is not defined before it", i, n.Op, a.Ref())
				}
			}
		}
		if len(n.Outs) == 0 {
			return fmt.Errorf("node %d (%s) defines no value", i, n.Op)
		}
		for _, o := range n.Outs {
			if o.Def != n || defined[o] || ids[o.ID] {
				return fmt.Errorf("node %d (%s): value %s is defined twice or by another node", i, n.Op, o.Ref())
			}
			defined[o], ids[o.ID] = true, true
		}
		if n.Op.IsLeaf() {
			continue
		}
		res, err := Infer(n)
		if err != nil {
			return fmt.Errorf("node %d (%s): %s", i, n, err.Msg)
		}
		if len(res) != len(n.Outs) {
			return fmt.Errorf("node %d (%s): %d outputs, the op gives %d", i, n, len(n.Outs), len(res))
		}
		for j, r := range res {
			if o := n.Outs[j]; o.Type.DType != r.Type.DType || !o.Type.Shape.Equal(r.Type.Shape) {
				return fmt.Errorf("node %d (%s): output %d is %s, the op gives %s", i, n, j, o.Type, r.Type)
			}
		}
	}
	for _, o := range g.Outputs {
		if !defined[o] {
			return fmt.Errorf("output %s is not defined by the graph", o.Ref())
		}
	}
	return nil
}
