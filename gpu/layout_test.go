package gpu

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/specs"
)

// llamaDecodePlan is the fused Llama-3-8B decode step at B1 over 64 cached
// tokens.
func llamaDecodePlan(t *testing.T) *Plan {
	t.Helper()
	file, src, _ := specs.Source("llama3_8b")
	g, err := frontend.Parse(file, src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(g, map[string]int64{"B": 1, "S": 1, "T": 64}, true)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLayoutTensorMap lays out the Llama-3-8B decode step, whose attention
// kernel takes a tensor map of its cache (codegen.RowMap), and checks that
// a map over a buffer the kernel does not take, which the launch could not
// encode from the kernel's own arguments, is refused by name.
func TestLayoutTensorMap(t *testing.T) {
	p := llamaDecodePlan(t)
	g := p.Plan.Graph
	if _, err := NewLayout(p); err != nil {
		t.Fatal(err)
	}
	var m *codegen.Param
	for _, k := range p.Kernels {
		for i, prm := range k.CUDA.Params {
			if prm.Map != nil {
				m = &k.CUDA.Params[i]
			}
		}
	}
	if m == nil {
		t.Fatal("no kernel of the decode step takes a tensor map")
	}
	keep := *m.Map
	defer func() { m.Map = &keep }()
	bad := keep
	bad.V = g.Outputs[0]
	m.Map = &bad
	_, err := NewLayout(p)
	if err == nil || !strings.Contains(err.Error(), "tensor map "+m.Name+": "+g.Outputs[0].Ref()+" is not one of its buffer parameters") {
		t.Errorf("a map over the layer's output: error %v", err)
	}
}
