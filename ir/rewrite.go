package ir

// NewNode types and adds a node computing op on args, placed just before the
// node before (or at the end when before is nil). It returns the node, or the
// type error.
func (g *Graph) NewNode(op Op, attr Attr, before *Node, args ...*Value) (*Node, error) {
	n := &Node{Op: op, Args: args, Attr: attr}
	res, err := Infer(n)
	if err != nil {
		return nil, err
	}
	if before != nil {
		n.Pos = before.Pos
	}
	for _, r := range res {
		v := g.NewValue(n, r.Type)
		v.Ragged, v.Packed = r.Ragged, r.Packed
	}
	at := len(g.Nodes)
	for i, m := range g.Nodes {
		if m == before {
			at = i
			break
		}
	}
	g.Nodes = append(g.Nodes[:at], append([]*Node{n}, g.Nodes[at:]...)...)
	g.renumber()
	return n, nil
}

// ReplaceUses makes every reader of old read new instead, outputs included.
// The new value keeps old's spec name when it has none.
func (g *Graph) ReplaceUses(old, new *Value) {
	for _, n := range g.Nodes {
		for i, a := range n.Args {
			if a == old {
				n.Args[i] = new
			}
		}
		for _, o := range n.Outs {
			if o.Ragged != nil && o.Ragged.Lens == old {
				o.Ragged.Lens = new
			}
		}
	}
	for i, o := range g.Outputs {
		if o == old {
			g.Outputs[i] = new
		}
	}
	if new.Name == "" {
		new.Name = old.Name
	}
}

// RemoveDead deletes nodes whose values nothing reads: not an output, not an
// argument, not a layout input or sequence length, and not a cache write or a
// leaf. It returns how many nodes it removed.
func (g *Graph) RemoveDead() int {
	removed := 0
	for {
		live := map[*Value]bool{}
		for _, o := range g.Outputs {
			live[o] = true
		}
		for _, n := range g.Nodes {
			for _, a := range n.Args {
				live[a] = true
			}
			if l := n.Attr.Layout; l != nil {
				live[l.Indptr], live[l.Indices], live[l.Last] = true, true, true
			}
			for _, o := range n.Outs {
				if o.Ragged != nil {
					live[o.Ragged.Lens] = true
				}
			}
		}
		kept := g.Nodes[:0]
		n0 := len(g.Nodes)
		for _, n := range g.Nodes {
			keep := n.Op.IsLeaf() || n.Op == OpAppend
			for _, o := range n.Outs {
				keep = keep || live[o]
			}
			if keep {
				kept = append(kept, n)
			}
		}
		g.Nodes = kept
		if len(kept) == n0 {
			break
		}
		removed += n0 - len(kept)
	}
	g.renumber()
	return removed
}

func (g *Graph) renumber() {
	for i, n := range g.Nodes {
		n.ID = i + 1
	}
}
