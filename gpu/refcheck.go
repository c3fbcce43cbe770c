package gpu

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fuser-dev/fuser/codegen/torch"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/runtime"
)

// This file is the Go side of the external-reference check (issue #19,
// item 2): gpu/cmd/refdump runs each case's fused and unfused plans on the
// device and writes, per case, the exported PyTorch program of the layer
// as written (codegen/torch), the inputs, params and states, and the
// outputs and states after the step as our kernels computed them, all in
// safetensors files named as the spec declares; bench/refcheck.py then
// holds ours to twice PyTorch's own error against float64.

// refWhat are the suite's kinds of dims (Cases) a shipped spec is checked
// at: a decode step over a long cache and a prefill.
var refWhat = []string{"decode long T", "prefill (GEMM)"}

// refDec are the decode attention layers (DecLayer) checked: a cache of
// each layout but the contiguous one the specs have, the window, the
// softcap and the cascade.
var refDec = []string{"dec_ragged128", "dec_paged16", "dec_cascaderagged128", "dec_win128", "dec_sc256"}

// refOps are the every-op layers (OpsLayer) checked: fp8e4m3's computes
// in fp8, which PyTorch has no kernels for (codegen/torch refuses it).
var refOps = []string{"ops_bf16", "ops_f16", "ops_f32"}

// RefCases are the cases of the external-reference check, chosen among
// the suite's (Cases(seed)) so that the bundle has their kernels: every
// shipped spec, shrunk, at a decode step over a long cache and at a
// prefill; Llama-3-8B at full size at decode (two rows and one) and
// prefill; the first case of each of refDec; and the every-op layers of
// refOps.
func RefCases(seed int64) []Case {
	var out []Case
	seen := map[string]bool{}
	for _, c := range Cases(seed) {
		switch {
		case c.Full, isSpec(c.Spec) && slices.Contains(refWhat, c.What):
		case slices.Contains(refDec, c.Spec) && !seen[c.Spec], slices.Contains(refOps, c.Spec):
			seen[c.Spec] = true
		default:
			continue
		}
		out = append(out, c)
	}
	return out
}

// RefManifest is cases.json, what refcheck.py reads.
type RefManifest struct {
	Seed  int64       `json:"seed"`
	Cases []*RefEntry `json:"cases"`
}

// RefEntry is one case: its files are relative to the manifest's
// directory.
type RefEntry struct {
	Name string `json:"name"`
	// Spec is the layer's name, What the kind of dims.
	Spec string `json:"spec"`
	What string `json:"what"`
	Full bool   `json:"full"`
	// Dims are every dim, derived page-pool dims included.
	Dims map[string]int64 `json:"dims"`
	// Consts are the layer's constants (the model's, shrunk or not).
	Consts map[string]float64 `json:"consts"`
	// Program is the exported PyTorch program and Inputs its inputs,
	// params and states (a paged or ragged state as its pool or buffer).
	Program string `json:"program"`
	Inputs  string `json:"inputs"`
	// Results are the outputs and the states an append writes, compared
	// by refcheck.py.
	Results []string `json:"results"`
	// Plans are each plan's results file ("fused", "unfused"), or why
	// there is none.
	Plans map[string]RefPlan `json:"plans"`
}

// RefPlan is one plan's results: a safetensors file, or why it did not
// run.
type RefPlan struct {
	File string `json:"file,omitempty"`
	Skip string `json:"skip,omitempty"`
}

// stDTypes are the safetensors names of the dtypes.
var stDTypes = map[ir.DType]string{ir.BF16: "BF16", ir.F16: "F16", ir.F32: "F32", ir.I32: "I32", ir.FP8E4M3: "F8_E4M3"}

// RefCase is a case prepared for the check: its graph, dims, inputs and
// manifest entry.
type RefCase struct {
	Entry  *RefEntry
	Graph  *ir.Graph
	Dims   map[string]int64
	Inputs map[string]*interp.Tensor
	// Results are the values compared: the outputs, then the states an
	// append writes.
	Results []*ir.Value
	dir     string
}

// PrepareRefCase draws c's inputs (interp.RandomInputs, as the suite
// does) and writes under root/sub its exported program, layer.py, and
// its inputs, inputs.safetensors.
func PrepareRefCase(root, sub string, c Case) (*RefCase, error) {
	g, err := c.Graph()
	if err != nil {
		return nil, err
	}
	dims, _, err := interp.DeriveDims(g, c.Dims)
	if err != nil {
		return nil, err
	}
	inputs, err := interp.RandomInputs(g, dims, c.Seed)
	if err != nil {
		return nil, err
	}
	rc := &RefCase{Graph: g, Dims: dims, Inputs: inputs, dir: filepath.Join(root, sub), Results: Results(g)}
	rc.Entry = &RefEntry{Name: c.Name(), Spec: g.Name, What: c.What, Full: c.Full, Dims: dims, Consts: g.Consts,
		Program: filepath.Join(sub, "layer.py"), Inputs: filepath.Join(sub, "inputs.safetensors"), Plans: map[string]RefPlan{}}
	for _, v := range rc.Results {
		rc.Entry.Results = append(rc.Entry.Results, v.Name)
	}
	if err := os.MkdirAll(rc.dir, 0o755); err != nil {
		return nil, err
	}
	prog, err := torch.Export(g, torch.Options{File: c.Name(), Dims: dims})
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := os.WriteFile(filepath.Join(root, rc.Entry.Program), []byte(prog), 0o644); err != nil {
		return nil, err
	}
	var specs []runtime.TensorSpec
	var data [][]byte
	for _, v := range slices.Concat(g.Inputs, g.Params, g.States) {
		t := inputs[v.Name]
		specs = append(specs, tensorSpec(v.Name, v.Type.DType, t.Shape))
		data = append(data, Encode(t.Data, v.Type.DType))
	}
	return rc, writeSafetensors(filepath.Join(root, rc.Entry.Inputs), specs, data)
}

// PlanResults are rc's results as plan p's device buffers know them
// (Plan.Results), what Device.Step reads: rc.Results are values of
// rc.Graph, which the passes copied, and have no buffer of p's.
func (rc *RefCase) PlanResults(p *Plan) ([]*ir.Value, error) {
	vs := p.Results()
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	if !slices.Equal(names, rc.Entry.Results) {
		return nil, fmt.Errorf("%s plan's results are %v, the case's %v", PlanName(p.Fused), names, rc.Entry.Results)
	}
	return vs, nil
}

// ResultShape is the shape of result v as the check stores it: an
// output's, a contiguous state's after the append ([2, B, G, T+S, Dh]), a
// paged or ragged state's pool or buffer (its input's shape).
func (rc *RefCase) ResultShape(v *ir.Value) ([]int, error) {
	if IsState(v) {
		if l := v.Def.Attr.Layout; l != nil && l.Kind != ir.Contiguous {
			return rc.Inputs[v.Name].Shape, nil
		}
		return rc.Graph.StorageShape(v).Eval(rc.Dims)
	}
	return v.Type.Shape.Eval(rc.Dims)
}

// WritePlanResults writes one plan's results (device bytes of each value
// of Results, by name, at least its ResultShape's size) to
// <plan>.safetensors and records the file in the entry.
func (rc *RefCase) WritePlanResults(plan string, got map[string][]byte) error {
	var specs []runtime.TensorSpec
	var data [][]byte
	for _, v := range rc.Results {
		shape, err := rc.ResultShape(v)
		if err != nil {
			return err
		}
		s := tensorSpec(v.Name, v.Type.DType, shape)
		b, ok := got[v.Name]
		if !ok || int64(len(b)) < s.Bytes() {
			return fmt.Errorf("%s plan: %d bytes of %s, want %d", plan, len(b), v.Name, s.Bytes())
		}
		specs = append(specs, s)
		data = append(data, b[:s.Bytes()]) // a ragged cache fills the start of its buffer
	}
	file := filepath.Join(filepath.Base(rc.dir), plan+".safetensors")
	if err := writeSafetensors(filepath.Join(rc.dir, plan+".safetensors"), specs, data); err != nil {
		return err
	}
	rc.Entry.Plans[plan] = RefPlan{File: file}
	return nil
}

// tensorSpec names a tensor of dtype dt and shape for safetensors.
func tensorSpec(name string, dt ir.DType, shape []int) runtime.TensorSpec {
	s := runtime.TensorSpec{Name: name, DType: stDTypes[dt], Shape: make([]int64, len(shape))}
	for i, n := range shape {
		s.Shape[i] = int64(n)
	}
	return s
}

// writeSafetensors writes a safetensors file.
func writeSafetensors(path string, specs []runtime.TensorSpec, data [][]byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := runtime.WriteSafetensors(f, specs, data); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// WriteRefManifest writes cases.json under root.
func WriteRefManifest(root string, m *RefManifest) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, "cases.json"), b, 0o644)
}

// RefSubdir is the directory of the i-th case: c00_llama3_8b.
func RefSubdir(i int, c Case) string {
	return fmt.Sprintf("c%02d_%s", i, strings.ReplaceAll(c.Spec, "/", "_"))
}
