package interp

import (
	"fmt"
	"sort"

	"github.com/fuser-dev/fuser/ir"
)

// loadLeaves checks and stores the inputs, params and states.
func (m *machine) loadLeaves(inputs map[string]*Tensor) error {
	known := map[string]bool{}
	var plain []*ir.Value
	plain = append(plain, m.g.Inputs...)
	plain = append(plain, m.g.Params...)
	for _, v := range append(plain, m.g.States...) {
		known[v.Name] = true
		if inputs[v.Name] == nil {
			return fmt.Errorf("missing %s %s : %s", v.Def.Op, v.Name, v.Type)
		}
	}
	var unknown []string
	for name := range inputs {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("unknown inputs %v: the layer declares no such input, param or state", unknown)
	}
	for _, v := range plain {
		t := inputs[v.Name]
		shape, err := m.shape(v)
		if err != nil {
			return fmt.Errorf("%s %s: %w", v.Def.Op, v.Name, err)
		}
		if err := checkTensor(t, shape); err != nil {
			return fmt.Errorf("%s %s : %s: %w", v.Def.Op, v.Name, v.Type, err)
		}
		if v.Type.DType == ir.I32 {
			if err := checkIntegral(t); err != nil {
				return fmt.Errorf("%s %s: %w", v.Def.Op, v.Name, err)
			}
		}
		m.vals[v] = m.rounded(t, v.Type.DType)
	}
	for _, v := range m.g.States {
		if err := m.loadState(v, inputs[v.Name]); err != nil {
			return fmt.Errorf("state %s: %w", v.Name, err)
		}
	}
	return nil
}

// rounded returns t, or a rounded copy when Options.Round is set.
func (m *machine) rounded(t *Tensor, dt ir.DType) *Tensor {
	if !m.opt.Round || dt == ir.I32 {
		return t
	}
	c := t.Clone()
	roundAll(c, dt)
	return c
}

// checkTensor checks that t is a well-formed tensor of the given shape.
func checkTensor(t *Tensor, shape []int) error {
	if !t.SameShape(shape) {
		return fmt.Errorf("got shape %v, want %v", t.Shape, shape)
	}
	if len(t.Data) != numElements(shape) {
		return fmt.Errorf("shape %v holds %d values, not %d", shape, len(t.Data), numElements(shape))
	}
	return nil
}

// checkIntegral checks that an i32 tensor holds integers in the i32 range.
func checkIntegral(t *Tensor) error {
	for i, x := range t.Data {
		if x != float64(int32(x)) {
			return fmt.Errorf("element %d is %g, not an i32", i, x)
		}
	}
	return nil
}
