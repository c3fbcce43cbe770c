package plan

import "fmt"

// Verify checks the plan's invariants: every op that is not a view is in
// exactly one kernel, each kernel reads only values written by earlier
// kernels or given by the caller, the load stage comes first and reads
// only params and its own values, and every stored layout permutes a value
// a kernel computes for other kernels.
func (p *Plan) Verify() error {
	owner := map[*Kernel]int{}
	placed := map[any]*Kernel{}
	for i, k := range p.Kernels {
		owner[k] = i
		if len(k.Nodes) == 0 {
			return fmt.Errorf("kernel %d has no ops", i)
		}
		for _, n := range k.Nodes {
			if placed[n] != nil {
				return fmt.Errorf("op %s is in two kernels", n)
			}
			placed[n] = k
		}
	}
	written := map[any]int{}
	for i, k := range p.Kernels {
		for _, n := range k.Nodes {
			for _, o := range n.Outs {
				written[o] = i
			}
		}
	}
	for _, n := range p.Graph.Nodes {
		if !IsView(n.Op) && placed[n] == nil {
			return fmt.Errorf("op %s is in no kernel", n)
		}
	}
	for i, k := range p.Kernels {
		for _, in := range k.Inputs {
			if j, ok := written[in]; ok && j >= i {
				return fmt.Errorf("kernel %s reads %s before kernel %d writes it", k.Name, in.Ref(), j)
			}
		}
	}
	if err := p.verifyLoad(); err != nil {
		return err
	}
	return p.verifyLayouts(written)
}
