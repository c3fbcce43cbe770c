package laddercheck

import (
	"fmt"

	"github.com/fuser-dev/fuser/codegen/golang"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/runtime"
)

// Layout is what the check knows of a target's generated package, from
// the code generator's own description of it: the inputs of a step, in
// the order of StepInputs' fields, as its Ladder stages them; the paged
// cache's table; and the buffers the check resets and downloads, named
// and sized as the package names and sizes them.
type Layout struct {
	Inputs []Input
	// Pages is the paged cache's table (Scratch the page past the pool the
	// package allocates), nil for a contiguous cache.
	Pages *runtime.PageTable
	// Buffers are the inputs (following Inputs), then the states and the
	// outputs, in the generated package's order.
	Buffers []Buffer
}

// Input is one input of a step.
type Input struct {
	runtime.StepInput
	DType ir.DType
}

// Buffer is a buffer of the generated Layer.
type Buffer struct {
	golang.Field
	// RowBytes is an output's bytes per sequence: its leading axis is B.
	RowBytes int64
}

// Key names a buffer in a Snapshot: its role and name ("output y").
func (b Buffer) Key() string { return b.Role + " " + b.Value.Name }

// ArenaKey names the arena in a Snapshot.
const ArenaKey = "arena"

// NewLayout describes t's generated package and checks that t's steps fit
// it.
func NewLayout(t Target) (*Layout, error) {
	g := t.Graph
	ins, pages, err := golang.LadderInputs(g, t.Dims)
	if err != nil {
		return nil, err
	}
	names, err := golang.LayerNames(g, t.Dims)
	if err != nil {
		return nil, err
	}
	l := &Layout{Pages: pages}
	for _, f := range names.Buffers {
		b := Buffer{Field: f}
		switch f.Role {
		case "input":
			i := len(l.Inputs)
			if i >= len(ins) || ins[i].Name != f.Value.Name {
				return nil, fmt.Errorf("%s: input %s is not the ladder's step input %d", t.Name(), f.Value.Name, i)
			}
			l.Inputs = append(l.Inputs, Input{StepInput: ins[i], DType: f.Value.Type.DType})
		case "output":
			sh := f.Value.Type.Shape
			if len(sh) == 0 || !sh[0].Equal(ir.Sym("B")) {
				return nil, fmt.Errorf("%s: output %s %s has no leading batch axis", t.Name(), f.Value.Name, sh)
			}
			b.RowBytes = f.Bytes / t.Dims["B"]
		case "state":
		default:
			continue
		}
		l.Buffers = append(l.Buffers, b)
	}
	if len(l.Inputs) != len(ins) {
		return nil, fmt.Errorf("%s: %d inputs for %d step inputs", t.Name(), len(l.Inputs), len(ins))
	}
	if err := t.check(l); err != nil {
		return nil, err
	}
	return l, nil
}

// StepInputs are the inputs as runtime.Stage takes them.
func (l *Layout) StepInputs() []runtime.StepInput {
	out := make([]runtime.StepInput, len(l.Inputs))
	for i, in := range l.Inputs {
		out[i] = in.StepInput
	}
	return out
}
