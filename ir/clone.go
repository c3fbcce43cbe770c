package ir

// Clone returns a deep copy of the graph: passes rewrite the copy, so the
// written graph stays available as the unfused program.
func (g *Graph) Clone() *Graph {
	c := &Graph{Name: g.Name, Dims: append([]string(nil), g.Dims...), Consts: map[string]float64{}, nextID: g.nextID}
	for k, v := range g.Consts {
		c.Consts[k] = v
	}
	vals := map[*Value]*Value{}
	mapVal := func(v *Value) *Value {
		if v == nil {
			return nil
		}
		return vals[v]
	}
	for _, n := range g.Nodes {
		nn := &Node{ID: n.ID, Op: n.Op, Pos: n.Pos, Attr: n.Attr}
		for _, a := range n.Args {
			nn.Args = append(nn.Args, mapVal(a))
		}
		if l := n.Attr.Layout; l != nil {
			cl := *l
			cl.Indptr, cl.Indices, cl.Last = mapVal(l.Indptr), mapVal(l.Indices), mapVal(l.Last)
			nn.Attr.Layout = &cl
		}
		if at := n.Attr.Attn; at != nil {
			ca := *at
			nn.Attr.Attn = &ca
		}
		for _, o := range n.Outs {
			no := &Value{ID: o.ID, Name: o.Name, Type: o.Type, Def: nn}
			vals[o] = no
			nn.Outs = append(nn.Outs, no)
		}
		c.Nodes = append(c.Nodes, nn)
	}
	// Ragged markers may point at values defined later (a state's lengths).
	for _, n := range g.Nodes {
		for _, o := range n.Outs {
			if r := o.Ragged; r != nil {
				cr := *r
				cr.Lens = mapVal(r.Lens)
				if r.Less != nil {
					cr.Less = mapVal(r.Less)
				}
				vals[o].Ragged = &cr
			}
			if p := o.Packed; p != nil {
				vals[o].Packed = &Packed{Axis: p.Axis, Indptr: mapVal(p.Indptr)}
			}
		}
	}
	for _, list := range []struct {
		from []*Value
		to   *[]*Value
	}{
		{g.Inputs, &c.Inputs}, {g.Params, &c.Params}, {g.States, &c.States}, {g.Outputs, &c.Outputs},
	} {
		for _, v := range list.from {
			*list.to = append(*list.to, mapVal(v))
		}
	}
	return c
}
