package passes

import "github.com/fuser-dev/fuser/ir"

// composeTranspose writes transposes and reshapes in one form: a transpose
// of a transpose is one transpose of the composed permutation, a reshape of
// a reshape is one reshape, and a transpose that keeps every axis in place
// or a reshape to the same shape is its argument.
func composeTranspose(s *State, d *ir.Node, _ map[*ir.Value][]*ir.Node) (bool, error) {
	g := s.Graph
	x := d.Args
	switch {
	case d.Op == ir.OpTranspose && isIdentity(d.Attr.Perm), d.Op == ir.OpReshape && x[0].Type.Shape.Equal(d.Outs[0].Type.Shape):
		g.ReplaceUses(d.Outs[0], x[0])
		return true, nil
	case d.Op == ir.OpTranspose && x[0].Def.Op == ir.OpTranspose:
		inner := x[0].Def
		perm := make([]int, len(d.Attr.Perm))
		for i, ax := range d.Attr.Perm {
			perm[i] = inner.Attr.Perm[ax]
		}
		return replaceWith(s, d, ir.OpTranspose, ir.Attr{Perm: perm}, inner.Args[0])
	case d.Op == ir.OpReshape && x[0].Def.Op == ir.OpReshape:
		return replaceWith(s, d, ir.OpReshape, d.Attr, x[0].Def.Args[0])
	}
	return false, nil
}

// replaceWith replaces d's value with op(args), unless that does not type
// (a reshape may not merge a variable-length axis): then it leaves d.
func replaceWith(s *State, d *ir.Node, op ir.Op, attr ir.Attr, args ...*ir.Value) (bool, error) {
	n, err := s.Graph.NewNode(op, attr, d, args...)
	if err != nil {
		return false, nil
	}
	s.Graph.ReplaceUses(d.Outs[0], n.Outs[0])
	return true, nil
}

// isIdentity reports whether a permutation keeps every axis in place.
func isIdentity(perm []int) bool {
	for i, ax := range perm {
		if ax != i {
			return false
		}
	}
	return true
}
