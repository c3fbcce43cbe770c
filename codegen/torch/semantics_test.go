package torch_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/fuser-dev/fuser/codegen/torch"
	"github.com/fuser-dev/fuser/gpu"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/specs"
	"github.com/fuser-dev/fuser/specs/testlayers"
)

// driver runs exported programs, each given as three arguments: the
// program, a JSON file of the tensors it reads, and the JSON file it
// writes its results to, every float as Python's float.hex (exact, and inf
// and nan included), in one process (PyTorch takes a second to import).
const driver = `
import importlib.util, json, sys
import torch
dtypes = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "i32": torch.int32}
for prog, inp, outp in zip(*[iter(sys.argv[1:])] * 3):
    spec = importlib.util.spec_from_file_location("layer", prog)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    doc = json.load(open(inp))
    t = {n: torch.tensor(x["data"], dtype=torch.float64).reshape(x["shape"]).to(dtypes[x["dtype"]]) for n, x in doc["tensors"].items()}
    res = {"results": {}}
    for mode in ["ref64", "native"]:
        try:
            out = mod.layer(t, doc["dims"], mode)
        except RuntimeError as e:
            # this PyTorch's CPU kernels lack some f16 ops (rsqrt, log)
            if mode == "native" and "not implemented for 'Half'" in str(e):
                res["skip"] = str(e)
                continue
            raise
        for n, x in out.items():
            res["results"][mode + " " + n] = {"dtype": str(x.dtype), "shape": list(x.shape), "data": [float(v).hex() for v in x.double().flatten().tolist()]}
    json.dump(res, open(outp, "w"))
`

// torchPython returns a Python that imports torch: $FUSER_PYTHON, else
// python3 on the PATH; the test is skipped without one.
func torchPython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("FUSER_PYTHON")
	if py == "" {
		py = "python3"
	}
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skipf("no PyTorch for %s (set FUSER_PYTHON to a python3 that has it): the exported programs' semantics are then checked on the device only (bench/refcheck.py)", py)
	}
	return py
}

// layerCase is a graph at dims.
type layerCase struct {
	name string
	g    *ir.Graph
	dims map[string]int64
}

// semanticCases are every shipped spec shrunk at a decode and a prefill
// binding, interp's attention layers (paged, ragged, cascade, window,
// softcap, score biases) and the device suite's decode attention layers
// over ragged and paged caches and with score biases, and its every-op
// layers.
func semanticCases(t *testing.T) []layerCase {
	var out []layerCase
	add := func(name string, g *ir.Graph, err error, dims ...map[string]int64) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, d := range dims {
			out = append(out, layerCase{name, g, d})
		}
	}
	decode := map[string]int64{"B": 3, "S": 1, "T": 21, "L": 5}
	prefill := map[string]int64{"B": 2, "S": 5, "T": 3, "L": 2}
	for _, name := range specs.Names() {
		g, err := testlayers.Small(name)
		add(name, g, err, pick(g, decode), pick(g, prefill))
	}
	for _, l := range slices.Concat(testlayers.AttnLayers, testlayers.BiasLayers) {
		g, err := testlayers.AttnLayer(l.Name)
		add("attn_"+l.Name, g, err, pick(g, decode), pick(g, prefill))
	}
	for _, v := range []string{"ragged64", "paged4", "cascaderagged64", "cascadewin64", "sc64", "win64", "bias64", "biassc64", "alibif1664"} {
		g, err := gpu.DecLayer(v)
		add("dec_"+v, g, err, pick(g, map[string]int64{"B": 3, "S": 2, "T": 9, "L": 4}))
	}
	for _, dt := range []string{"bf16", "f16", "f32"} {
		g, err := gpu.OpsLayer(dt)
		add("ops_"+dt, g, err, map[string]int64{"B": 2, "S": 3})
	}
	return out
}

// pick keeps the dims of g among dims.
func pick(g *ir.Graph, dims map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for _, d := range g.Dims {
		if n, ok := dims[d]; ok {
			out[d] = n
		}
	}
	return out
}

// TestSemantics runs every case's exported program, where a Python with
// PyTorch is at hand: in ref64 it must equal the interpreter's float64 run
// of the graph to 1e-10 of the output's largest magnitude (the two differ
// in the order of their sums only), and in native it must hold each result
// in its declared dtype and stay near the reference.
func TestSemantics(t *testing.T) {
	py := torchPython(t)
	dir := t.TempDir()
	drv := filepath.Join(dir, "driver.py")
	if err := os.WriteFile(drv, []byte(driver), 0o644); err != nil {
		t.Fatal(err)
	}
	type prepared struct {
		layerCase
		want map[string]*interp.Tensor
		out  string
	}
	var runs []prepared
	args := []string{drv}
	for i, c := range semanticCases(t) {
		dims, _, err := interp.DeriveDims(c.g, c.dims)
		if err != nil {
			t.Fatal(err)
		}
		inputs, err := interp.RandomInputs(c.g, dims, int64(i)+1)
		if err != nil {
			t.Fatal(err)
		}
		want, err := interp.Run(c.g, dims, inputs, interp.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		base := filepath.Join(dir, fmt.Sprint(i))
		writeCase(t, base, c.g, dims, inputs)
		c.dims = dims
		runs = append(runs, prepared{c, outputsOf(want), base + ".out.json"})
		args = append(args, base+".py", base+".in.json", base+".out.json")
	}
	if b, err := exec.Command(py, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", drv, err, b)
	}
	for _, r := range runs {
		t.Run(fmt.Sprintf("%s/%s", r.name, gpu.DimsString(r.dims)), func(t *testing.T) {
			got := readResults(t, r.out)
			for name, w := range r.want {
				compare(t, "ref64 "+name, got.Results["ref64 "+name], w, 1e-10)
				if got.Skip != "" {
					t.Logf("native not run: %s", got.Skip)
					continue
				}
				n := got.Results["native "+name]
				if n == nil {
					t.Fatalf("native %s: not returned", name)
				}
				if wantDT := torchDType[declared(r.g, name)]; n.DType != wantDT {
					t.Errorf("native %s is %s, want %s", name, n.DType, wantDT)
				}
				compare(t, "native "+name, n, w, nativeTol(r.g))
			}
		})
	}
}

// torchDType names the torch dtype of each spec dtype as Python prints it.
var torchDType = map[ir.DType]string{ir.BF16: "torch.bfloat16", ir.F16: "torch.float16", ir.F32: "torch.float32", ir.I32: "torch.int32"}

// nativeTol bounds a native result's error relative to the largest
// reference magnitude, by the least precise dtype the graph computes in:
// loose, a check that the mode computes the layer, not a measure of its
// precision (the device's check measures that).
func nativeTol(g *ir.Graph) float64 {
	tol := 1e-4 // f32
	for _, n := range g.Nodes {
		for _, o := range n.Outs {
			switch o.Type.DType {
			case ir.BF16:
				tol = max(tol, 0.1)
			case ir.F16:
				tol = max(tol, 0.02)
			}
		}
	}
	return tol
}

// declared is the dtype of output or state name.
func declared(g *ir.Graph, name string) ir.DType {
	for _, v := range append(append([]*ir.Value(nil), g.Outputs...), g.States...) {
		if v.Name == name {
			return v.Type.DType
		}
	}
	return ir.Invalid
}

// outputsOf are an interpreter run's outputs and states by name.
func outputsOf(r *interp.Result) map[string]*interp.Tensor {
	out := map[string]*interp.Tensor{}
	for n, x := range r.Outputs {
		out[n] = x
	}
	for n, x := range r.States {
		out[n] = x
	}
	return out
}

// pyTensor is a tensor of the driver's JSON.
type pyTensor struct {
	DType string   `json:"dtype"`
	Shape []int    `json:"shape"`
	Data  []string `json:"data"`
}

// results is what the driver writes for one program.
type results struct {
	// Skip says why native mode did not run.
	Skip string `json:"skip"`
	// Results are "MODE NAME" to tensor.
	Results map[string]*pyTensor `json:"results"`
}

// writeCase exports g to base.py and writes its inputs to base.in.json.
func writeCase(t *testing.T, base string, g *ir.Graph, dims map[string]int64, inputs map[string]*interp.Tensor) {
	t.Helper()
	src, err := torch.Export(g, torch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type in struct {
		DType string    `json:"dtype"`
		Shape []int     `json:"shape"`
		Data  []float64 `json:"data"`
	}
	doc := struct {
		Dims    map[string]int64 `json:"dims"`
		Tensors map[string]in    `json:"tensors"`
	}{dims, map[string]in{}}
	for _, v := range slices.Concat(g.Inputs, g.Params, g.States) {
		x := inputs[v.Name]
		doc.Tensors[v.Name] = in{v.Type.DType.String(), x.Shape, x.Data}
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for p, b := range map[string][]byte{base + ".py": []byte(src), base + ".in.json": js} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readResults reads what the driver wrote.
func readResults(t *testing.T, path string) *results {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r results
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// compare checks got against want element by element: |got - want| <=
// tol * max|want|, non-finite values only against the same value.
func compare(t *testing.T, what string, got *pyTensor, want *interp.Tensor, tol float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: not returned", what)
		return
	}
	if !slices.Equal(got.Shape, want.Shape) {
		t.Errorf("%s: shape %v, want %v", what, got.Shape, want.Shape)
		return
	}
	scale := 0.0
	for _, w := range want.Data {
		if !math.IsInf(w, 0) && !math.IsNaN(w) {
			scale = max(scale, math.Abs(w))
		}
	}
	bad, worst := 0, 0.0
	first := ""
	for i, s := range got.Data {
		g, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		w := want.Data[i]
		d := math.Abs(g - w)
		ok := d <= tol*scale
		if math.IsNaN(w) || math.IsInf(w, 0) || math.IsNaN(g) || math.IsInf(g, 0) {
			ok = g == w || (math.IsNaN(g) && math.IsNaN(w))
			d = 0
		}
		worst = max(worst, d)
		if !ok {
			if bad == 0 {
				first = fmt.Sprintf("element %d: %g, want %g", i, g, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements off by more than %g×%g (worst %g); first %s", what, bad, len(got.Data), tol, scale, worst, first)
	}
}
