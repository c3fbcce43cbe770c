package plan

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// Folded returns the values the load stage computes and the step reads:
// each lives in a buffer of its own, written once after the weights are
// loaded and read by every step as a param is. They are listed in kernel
// order, each once.
func (p *Plan) Folded() []*ir.Value {
	read := map[*ir.Value]bool{}
	for _, k := range p.Kernels {
		if k.Load {
			continue
		}
		for _, in := range k.Inputs {
			read[Root(in)] = true
		}
	}
	var out []*ir.Value
	for _, k := range p.Kernels {
		if !k.Load {
			continue
		}
		for _, o := range k.Outputs {
			if read[o] {
				out = append(out, o)
			}
		}
	}
	return out
}

// LoadOnly returns the params the load stage reads and no step kernel
// does: once the stage has run, the values it folded them into are all a
// step needs. They are listed in kernel order, each once.
func (p *Plan) LoadOnly() []*ir.Value {
	step := map[*ir.Value]bool{}
	for _, k := range p.Kernels {
		if !k.Load {
			for _, in := range k.Inputs {
				step[Root(in)] = true
			}
		}
	}
	var out []*ir.Value
	seen := map[*ir.Value]bool{}
	for _, k := range p.Kernels {
		if !k.Load {
			continue
		}
		for _, in := range k.Inputs {
			r := Root(in)
			if r.Def != nil && r.Def.Op == ir.OpParam && !step[r] && !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// verifyLoad checks the load stage: its kernels come before the step's and
// read only params and the load stage's own values.
func (p *Plan) verifyLoad() error {
	load := map[*ir.Value]bool{}
	step := false
	for _, k := range p.Kernels {
		if !k.Load {
			step = true
			continue
		}
		if step {
			return fmt.Errorf("load kernel %s runs after a step kernel", k.Name)
		}
		for _, in := range k.Inputs {
			r := Root(in)
			if !load[r] && (r.Def == nil || r.Def.Op != ir.OpParam) {
				return fmt.Errorf("load kernel %s reads %s, neither a param nor a load-stage value", k.Name, in.Ref())
			}
		}
		for _, o := range k.Outputs {
			load[o] = true
		}
	}
	return nil
}
