package build

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fuser-dev/fuser/codegen/golang"
	"github.com/fuser-dev/fuser/codegen/nvrtc"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// Plan is the document in plan.json: the plan at bound dims as the
// runtime, the benchmarks and people read it.
type Plan struct {
	Layer string           `json:"layer"`
	Fused bool             `json:"fused"`
	Dims  map[string]int64 `json:"dims"`
	// Inputs, Params, States and Outputs are the graph's leaves and outputs,
	// in declaration order.
	Inputs  []Value  `json:"inputs"`
	Params  []Value  `json:"params"`
	States  []Value  `json:"states"`
	Outputs []Value  `json:"outputs"`
	Kernels []Kernel `json:"kernels"`
	Arena   Arena    `json:"arena"`
	// Total is the plan's modelled traffic and work.
	Total Cost `json:"total"`
}

// Value is one tensor.
type Value struct {
	Ref  string `json:"ref"`
	Type string `json:"type"`
	// Bytes is the declared tensor's size; the Go package sizes a state's
	// buffer for the tokens the step appends (or as its page pool).
	Bytes int64 `json:"bytes"`
}

// Kernel is one kernel of the plan.
type Kernel struct {
	Name     string   `json:"name"`
	Strategy string   `json:"strategy"`
	Entries  []string `json:"entries"`
	// Ops are the graph ops the kernel computes, in graph order.
	Ops     []string `json:"ops"`
	Inputs  []string `json:"inputs"`
	Outputs []string `json:"outputs"`
	// Params are the entries' parameters (the ABI of codegen.Params, with
	// any leaf inputs the CUDA side adds).
	Params []Param `json:"params"`
	Launch Launch  `json:"launch"`
	Cost   Cost    `json:"cost"`
	// Ptxas is the ptxas report of each entry, when the compiler gave one.
	Ptxas []nvrtc.KernelInfo `json:"ptxas,omitempty"`
}

// Param is one kernel parameter: a buffer (Value) or a dim.
type Param struct {
	Name    string `json:"name"`
	Value   string `json:"value,omitempty"`
	Dim     string `json:"dim,omitempty"`
	Written bool   `json:"written,omitempty"`
	// Arena is the buffer's offset in the arena, for an intermediate.
	Arena *int64 `json:"arena,omitempty"`
	// Map is a tensor map parameter's description.
	Map *RowMap `json:"map,omitempty"`
}

// RowMap is a tensor map parameter (codegen.RowMap): the keys' and values'
// buffers and the head dim.
type RowMap struct {
	K  string `json:"k"`
	V  string `json:"v"`
	Dh int64  `json:"dh"`
}

// Launch is a kernel's launch plan; Block is what the entries are written
// for and launched with.
type Launch struct {
	Variant     string   `json:"variant"`
	Grid        [3]int64 `json:"grid"`
	Block       int      `json:"block"`
	SharedBytes int64    `json:"shared_bytes"`
	Launches    int      `json:"launches"`
	Splits      int64    `json:"splits"`
	Tile        [2]int64 `json:"tile"`
}

// Cost is modelled HBM traffic and work.
type Cost struct {
	BytesRead    int64 `json:"bytes_read"`
	BytesWritten int64 `json:"bytes_written"`
	L2Bytes      int64 `json:"l2_bytes"`
	Flops        int64 `json:"flops"`
	Launches     int   `json:"launches"`
}

// Arena is the static memory plan.
type Arena struct {
	Size    int64         `json:"size"`
	Buffers []ArenaBuffer `json:"buffers"`
}

// ArenaBuffer is one intermediate's place in the arena.
type ArenaBuffer struct {
	Value  string `json:"value"`
	Offset int64  `json:"offset"`
	Bytes  int64  `json:"bytes"`
}

// planJSON describes p, bound to dims, as indented JSON; info is the
// compiler's log, whose ptxas report is attached to the kernels.
func planJSON(p *plan.Plan, dims map[string]int64, fused bool, kernels []golang.Kernel, info string) ([]byte, error) {
	g := p.Graph
	doc := Plan{Layer: g.Name, Fused: fused, Dims: dims}
	var err error
	for _, vs := range []struct {
		dst *[]Value
		src []*ir.Value
	}{{&doc.Inputs, g.Inputs}, {&doc.Params, g.Params}, {&doc.States, g.States}, {&doc.Outputs, g.Outputs}} {
		if *vs.dst, err = values(vs.src, dims); err != nil {
			return nil, err
		}
	}
	costs, err := p.Costs(dims)
	if err != nil {
		return nil, err
	}
	reports, err := nvrtc.ParsePtxasInfo(info)
	if err != nil {
		return nil, err
	}
	for i, k := range p.Kernels {
		doc.Kernels = append(doc.Kernels, kernel(p, k, kernels[i], costs[i], reports))
	}
	doc.Total = cost(plan.Total(costs))
	doc.Arena.Size = p.Arena.Size
	for v, off := range p.Arena.Offsets {
		doc.Arena.Buffers = append(doc.Arena.Buffers, ArenaBuffer{Value: v.Ref(), Offset: off, Bytes: p.Arena.Bytes[v]})
	}
	slices.SortFunc(doc.Arena.Buffers, func(a, b ArenaBuffer) int {
		return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Value, b.Value))
	})
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("plan.json: %w", err)
	}
	return append(out, '\n'), nil
}

func kernel(p *plan.Plan, k *plan.Kernel, kd golang.Kernel, c plan.Cost, reports []nvrtc.KernelInfo) Kernel {
	l := k.Launch
	out := Kernel{
		Name: k.Name, Strategy: k.Strategy.String(), Entries: kd.Entries,
		Inputs: refs(k.Inputs), Outputs: refs(k.Outputs),
		Launch: Launch{Variant: l.Variant.String(), Grid: l.Grid, Block: kd.Block, SharedBytes: l.SharedBytes, Launches: l.Launches, Splits: l.Splits, Tile: l.Tile},
		Cost:   cost(c),
	}
	for _, n := range k.Nodes {
		out.Ops = append(out.Ops, n.String())
	}
	for _, prm := range kd.Params {
		jp := Param{Name: prm.Name, Dim: prm.Dim, Written: prm.Written}
		if m := prm.Map; m != nil {
			jp.Map = &RowMap{K: m.K.Ref(), V: m.V.Ref(), Dh: m.Dh}
		}
		if prm.Value != nil {
			jp.Value = prm.Value.Ref()
			if off, ok := p.Arena.Offsets[prm.Value]; ok {
				jp.Arena = &off
			}
		}
		out.Params = append(out.Params, jp)
	}
	for _, e := range out.Entries {
		for _, r := range reports {
			if r.Name == e {
				out.Ptxas = append(out.Ptxas, r)
			}
		}
	}
	return out
}

func cost(c plan.Cost) Cost {
	return Cost{BytesRead: c.BytesRead, BytesWritten: c.BytesWritten, L2Bytes: c.L2Bytes, Flops: c.Flops, Launches: c.Launches}
}

func values(vs []*ir.Value, dims map[string]int64) ([]Value, error) {
	out := []Value{}
	for _, v := range vs {
		n, err := plan.Bytes(v, dims)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Ref(), err)
		}
		out = append(out, Value{Ref: v.Ref(), Type: v.Type.String(), Bytes: n})
	}
	return out, nil
}

func refs(vs []*ir.Value) []string {
	out := []string{}
	for _, v := range vs {
		out = append(out, v.Ref())
	}
	return out
}
