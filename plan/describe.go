package plan

import "github.com/fuser-dev/fuser/ir"

// KernelDesc is a kernel in plain data, for JSON.
type KernelDesc struct {
	Name     string   `json:"name"`
	Strategy string   `json:"strategy"`
	Ops      []string `json:"ops"`
	Reads    []string `json:"reads"`
	Writes   []string `json:"writes"`
	// Layouts maps each written value stored in another axis order than
	// its own (by reference) to the permutation (plan.Layout).
	Layouts map[string][]int `json:"layouts,omitempty"`
	Launch  *Launch          `json:"launch,omitempty"`
	// Load marks a kernel of the load stage.
	Load bool `json:"load,omitempty"`
}

// Desc is a plan in plain data, for JSON.
type Desc struct {
	Layer      string       `json:"layer"`
	Kernels    []KernelDesc `json:"kernels"`
	ArenaBytes int64        `json:"arena_bytes,omitempty"`
	// Offsets maps each arena buffer (by value reference) to its offset.
	Offsets map[string]int64 `json:"arena_offsets,omitempty"`
}

// Describe returns the plan as plain data.
func (p *Plan) Describe() Desc {
	d := Desc{Layer: p.Graph.Name}
	for _, k := range p.Kernels {
		kd := KernelDesc{Name: k.Name, Strategy: k.Strategy.String(), Reads: refList(k.Inputs), Writes: refList(k.Outputs), Launch: k.Launch, Load: k.Load}
		for _, n := range k.Nodes {
			kd.Ops = append(kd.Ops, n.String())
		}
		for _, o := range k.Outputs {
			if l := p.Layouts[o]; l != nil {
				if kd.Layouts == nil {
					kd.Layouts = map[string][]int{}
				}
				kd.Layouts[o.Ref()] = l
			}
		}
		d.Kernels = append(d.Kernels, kd)
	}
	if p.Arena != nil {
		d.ArenaBytes = p.Arena.Size
		d.Offsets = map[string]int64{}
		for v, off := range p.Arena.Offsets {
			d.Offsets[v.Ref()] = off
		}
	}
	return d
}

func refList(vs []*ir.Value) []string {
	out := []string{}
	for _, v := range vs {
		out = append(out, v.Ref())
	}
	return out
}
