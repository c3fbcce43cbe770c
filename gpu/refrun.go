//go:build cuda

package gpu

import (
	"errors"
	"fmt"

	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
)

// Step runs p's whole step once on inputs (interp.RandomInputs' tensors,
// by declared name) and returns the device bytes of each of values (of
// p.Plan.Graph: p.Results or some of them) afterwards, by name. It fails when a kernel of p was
// not generated: the step would not be ours.
func (d *Device) Step(p *Plan, inputs map[string]*interp.Tensor, values []*ir.Value) (res map[string][]byte, err error) {
	if !p.Generated() {
		return nil, fmt.Errorf("not generated: %s", p.NotGenerated())
	}
	l, err := d.Load(p)
	if err != nil {
		return nil, err
	}
	in, err := l.Alloc()
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, in.Free()) }()
	if err := in.Reset(&Reference{P: p, Inputs: inputs}); err != nil {
		return nil, err
	}
	if err := d.Ctx.Synchronize(); err != nil {
		return nil, err
	}
	if err := l.Run(in, d.Stream); err != nil {
		return nil, err
	}
	if err := d.Stream.Synchronize(); err != nil {
		return nil, err
	}
	res = map[string][]byte{}
	for _, v := range values {
		b, err := in.Download(v)
		if err != nil {
			return nil, err
		}
		if !IsState(v) && Unwritten(b) {
			return nil, fmt.Errorf("output %s not written (every byte still the poison)", v.Name)
		}
		res[v.Name] = b
	}
	return res, nil
}
