package golang

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// Names are the Go names the package Generate writes for a graph gives its
// dims and its buffers, for a program that drives such a package and is
// itself generated (gpu/cmd/laddercheck).
type Names struct {
	// Dims maps each dim of the graph to its field of Dims.
	Dims map[string]string
	// Buffers are the inputs, params, states and outputs, in that order.
	Buffers []Field
}

// Field is one input, param, state or output of the generated package.
type Field struct {
	Value *ir.Value
	// Role is input, param, state or output.
	Role string
	// Name is the Layer's accessor of the value's buffer and, for an
	// input, its field of StepInputs.
	Name string
	// Bytes is the value's storage at the dims; the buffer may be larger
	// by the room the ladder's padding uses (a paged pool's scratch page).
	Bytes int64
	// Elem is the Go element type the value's host data is taken in, as a
	// field of StepInputs has it (see runtime.Element).
	Elem string
}

// LayerNames names and sizes g's dims and buffers at dims as Generate does.
func LayerNames(g *ir.Graph, dims map[string]int64) (*Names, error) {
	n, _, err := layerNames(g, dims)
	return n, err
}

// layerNames is LayerNames with the namer of the buffers, which goes on to
// name the load stage's buffers.
func layerNames(g *ir.Graph, dims map[string]int64) (*Names, namer, error) {
	out := &Names{Dims: map[string]string{}}
	dimNames := newNamer()
	for _, d := range g.Dims {
		out.Dims[d] = dimNames.name(d, 0)
	}
	names := newNamer(reserved...)
	for _, role := range []struct {
		name string
		vs   []*ir.Value
	}{{"input", g.Inputs}, {"param", g.Params}, {"state", g.States}, {"output", g.Outputs}} {
		for _, v := range role.vs {
			if plan.Root(v) != v || plan.InCache(v) {
				return nil, nil, fmt.Errorf("%s %s is a view of another buffer; not supported", role.name, v.Name)
			}
			n, err := storageBytes(g, v, dims)
			if err != nil {
				return nil, nil, fmt.Errorf("%s %s: %w", role.name, v.Name, err)
			}
			out.Buffers = append(out.Buffers, Field{Value: v, Role: role.name, Name: names.name(v.Name, v.ID), Bytes: n, Elem: elemName(v.Type.DType)})
		}
	}
	return out, names, nil
}

// elemName is the Go element type a step takes an input's host data in:
// bf16 and f16 as their bits in uint16, fp8 as uint8 (see
// runtime.Element).
func elemName(dt ir.DType) string {
	switch dt {
	case ir.BF16, ir.F16:
		return "uint16"
	case ir.F32:
		return "float32"
	case ir.I32:
		return "int32"
	}
	return "uint8"
}
