//go:build cuda

package gpu

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/fuser-dev/fuser/interp"
)

// TestDeterministicDecode checks decode attention's deterministic mode (a
// fixed split size, passes.Options.DecodeSplitKeys) bit for bit: sequence
// 0 of a batch of 4 with ragged lengths (paged cache), of a contiguous
// batch of 4 and of a cascade's batch of 4 (its shared prefix attended
// once for the batch) gives the same output bytes as the same sequence
// run alone, although the launch plans differ (grids, workspaces), and
// both outputs are written and match the float64 interpreter; it logs
// whether the default split happens to agree too.
func TestDeterministicDecode(t *testing.T) {
	dev, _ := testDevice(t)
	for _, tc := range DeterminismCases {
		for _, sk := range []int64{DeterministicSplitKeys, 0} {
			name := fmt.Sprintf("%s/T=%d/split-keys=%d", tc.Variant, tc.T, sk)
			if tc.L > 0 {
				name = fmt.Sprintf("%s/T=%d,L=%d/split-keys=%d", tc.Variant, tc.T, tc.L, sk)
			}
			t.Run(name, func(t *testing.T) {
				release, err := dev.Ctx.Bind()
				if err != nil {
					t.Fatal(err)
				}
				defer release()
				big, one, inputs, small, err := DeterminismPlans(tc, sk)
				if err != nil {
					t.Fatal(err)
				}
				const nb = DeterminismBatch
				ob, err := runOutput(dev, big, inputs)
				if err != nil {
					t.Fatal(err)
				}
				os1, err := runOutput(dev, one, small)
				if err != nil {
					t.Fatal(err)
				}
				checkOutput(t, fmt.Sprintf("batch of %d", nb), big, inputs, ob)
				checkOutput(t, "sequence 0 alone", one, small, os1)
				if len(os1) == 0 || len(ob) < len(os1) {
					t.Fatalf("outputs of %d and %d bytes", len(os1), len(ob))
				}
				same := bytes.Equal(os1, ob[:len(os1)])
				t.Logf("%s: batch of %d %v, alone %v: sequence 0 bit-identical: %v", name, nb, big.Plan.Kernels[len(big.Plan.Kernels)-1].Launch, one.Plan.Kernels[len(one.Plan.Kernels)-1].Launch, same)
				if sk > 0 && !same {
					diff := 0
					for i := range os1 {
						if os1[i] != ob[i] {
							diff++
						}
					}
					t.Errorf("deterministic mode: sequence 0 differs in %d of %d bytes between the batch and alone", diff, len(os1))
				}
			})
		}
	}
}

// checkOutput fails t when out, the bytes of p's output after a run on
// inputs, were not written or differ from the float64 interpreter's layer
// beyond the layer tolerance: two runs that agree bit for bit must also be
// right.
func checkOutput(t *testing.T, what string, p *Plan, inputs map[string]*interp.Tensor, out []byte) {
	t.Helper()
	o := p.Plan.Graph.Outputs[0]
	if Unwritten(out) {
		t.Errorf("%s: output %s not written (every byte still the poison)", what, o.Name)
		return
	}
	ref, err := RunLayer(p.Plan.Graph, p.Dims, inputs)
	if err != nil {
		t.Fatal(err)
	}
	d := Compare(Decode(out, o.Type.DType), ref.Outputs[o.Name].Data, nil, LayerToleranceOf(o))
	if d.OK() {
		t.Logf("%s: output %s against the reference: %s", what, o.Name, d)
	} else {
		t.Errorf("%s: output %s against the reference: %s", what, o.Name, d)
	}
}

// runOutput runs the plan on the inputs and returns its (only) output's
// bytes.
func runOutput(dev *Device, p *Plan, inputs map[string]*interp.Tensor) ([]byte, error) {
	l, err := dev.Load(p)
	if err != nil {
		return nil, err
	}
	in, err := l.Alloc()
	if err != nil {
		return nil, err
	}
	defer in.Free()
	if err := in.Reset(&Reference{P: p, Inputs: inputs}); err != nil {
		return nil, err
	}
	if err := l.Run(in, dev.Stream); err != nil {
		return nil, err
	}
	if err := dev.Stream.Synchronize(); err != nil {
		return nil, err
	}
	return in.Download(p.Plan.Graph.Outputs[0])
}
