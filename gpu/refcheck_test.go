package gpu

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen/torch"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/runtime"
	"github.com/fuser-dev/fuser/specs"
)

// TestRefCases checks the external-reference check's cases: every
// shipped spec at a decode and a prefill binding, Llama-3-8B at full size
// at both, each decode layer of refDec and each ops layer of refOps once,
// every one a suite case (so that the bundle has its kernels) whose layer
// exports, and no case twice (refdump picks them by name).
func TestRefCases(t *testing.T) {
	cases := RefCases(DefaultSeed)
	suite := map[string]bool{}
	for _, c := range Cases(DefaultSeed) {
		suite[c.Name()] = true
	}
	count, names := map[string]int{}, map[string]bool{}
	for _, c := range cases {
		if !suite[c.Name()] {
			t.Errorf("%s is not a suite case", c.Name())
		}
		if names[c.Name()] {
			t.Errorf("%s is a reference case twice", c.Name())
		}
		names[c.Name()] = true
		key := c.Spec
		if c.Full {
			key += "/full"
		}
		count[key]++
		g, err := c.Graph()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := torch.Export(g, torch.Options{}); err != nil {
			t.Errorf("%s: %v", c.Name(), err)
		}
	}
	want := map[string]int{specs.Default + "/full": 3}
	for _, n := range specs.Names() {
		want[n] = 2
	}
	for _, n := range slices.Concat(refDec, refOps) {
		want[n] = 1
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%s: %d cases, want %d", k, count[k], n)
		}
	}
	if len(count) != len(want) {
		t.Errorf("cases of %v, want those of %v", count, want)
	}
}

// TestPrepareRefCase writes a case of the paged decode spec (a pool, its
// page table) as refdump does, with the interpreter's results standing in
// for the GPU's, and reads everything back: the inputs and the results
// round-trip through the safetensors writer and reader, bit for bit in
// their dtypes, and the manifest names the files.
func TestPrepareRefCase(t *testing.T) {
	c := refCase(t, "paged_decode", map[string]int64{"B": 3, "S": 1, "T": 40})
	root := t.TempDir()
	rc, err := PrepareRefCase(root, RefSubdir(7, c), c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, rc.Entry.Program)); err != nil {
		t.Error(err)
	}
	readBack(t, filepath.Join(root, rc.Entry.Inputs), rc, rc.Inputs)
	res, err := interp.Run(rc.Graph, rc.Dims, rc.Inputs, interp.Options{Round: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*interp.Tensor{}
	got := map[string][]byte{}
	for _, v := range rc.Results {
		x := res.Outputs[v.Name]
		if IsState(v) {
			x = res.States[v.Name]
		}
		want[v.Name] = x
		got[v.Name] = append(Encode(x.Data, v.Type.DType), Poison, Poison) // a device buffer may be longer
	}
	if err := rc.WritePlanResults("fused", got); err != nil {
		t.Fatal(err)
	}
	if slices.Compare(rc.Entry.Results, []string{"y", "kv"}) != 0 {
		t.Errorf("results %v, want y and kv", rc.Entry.Results)
	}
	readBack(t, filepath.Join(root, rc.Entry.Plans["fused"].File), rc, want)
	delete(got, "kv")
	if err := rc.WritePlanResults("unfused", got); err == nil || !strings.Contains(err.Error(), "0 bytes of kv") {
		t.Errorf("results without kv: %v", err)
	}
	if err := WriteRefManifest(root, &RefManifest{Seed: 1, Cases: []*RefEntry{rc.Entry}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m RefManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if e := m.Cases[0]; e.Plans["fused"].File != "c07_paged_decode/fused.safetensors" || e.Dims["P"] == 0 || e.Consts["Dh"] != 8 {
		t.Errorf("manifest entry %+v", e)
	}
}

// TestRefPlanResults checks that what refdump reads after a step, each
// plan's results (RefCase.PlanResults), are the case's results by name and
// each has a device buffer of the plan's (Layout, as the device lays it
// out), an output's or a state's, for the fused and the unfused plans of
// Llama-3-8B and tiny at decode and prefill. The case's own values, of the
// graph before the passes copied it, have none: reading them made every
// plan's step on the H200 "has no device buffer".
func TestRefPlanResults(t *testing.T) {
	n := 0
	for i, c := range RefCases(DefaultSeed) {
		if c.Full || (c.Spec != "llama3_8b" && c.Spec != "tiny") {
			continue
		}
		n++
		rc, err := PrepareRefCase(t.TempDir(), RefSubdir(i, c), c)
		if err != nil {
			t.Fatal(err)
		}
		for _, fused := range []bool{true, false} {
			name := c.Name() + " " + PlanName(fused)
			p, err := NewPlan(rc.Graph, rc.Dims, fused)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			lay, err := NewLayout(p)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			vs, err := rc.PlanResults(p)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(vs) != len(rc.Entry.Results) || len(vs) == 0 {
				t.Errorf("%s: %d results, the case has %v", name, len(vs), rc.Entry.Results)
			}
			for _, v := range vs {
				b, ok := lay.Buf(v)
				switch {
				case !ok:
					t.Errorf("%s: result %s has no device buffer", name, v.Ref())
				case b.Role != "output" && b.Role != "state":
					t.Errorf("%s: result %s is in a buffer of role %s", name, v.Name, b.Role)
				}
			}
		}
	}
	if n != 4 {
		t.Errorf("%d cases of llama3_8b and tiny, want 4 (decode and prefill each)", n)
	}
}

// refCase is the first of RefCases of spec, at dims.
func refCase(t *testing.T, spec string, dims map[string]int64) Case {
	t.Helper()
	for _, c := range RefCases(DefaultSeed) {
		if c.Spec == spec {
			c.Dims = dims
			return c
		}
	}
	t.Fatalf("no case of %s", spec)
	return Case{}
}

// readBack checks that the safetensors file at path holds each of want's
// tensors, in its value's dtype, bit for bit.
func readBack(t *testing.T, path string, rc *RefCase, want map[string]*interp.Tensor) {
	t.Helper()
	f, err := runtime.OpenSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := rc.Graph
	for _, v := range slices.Concat(g.Inputs, g.Params, g.States, g.Outputs) {
		x, ok := want[v.Name]
		if !ok {
			continue
		}
		b, err := f.Read(tensorSpec(v.Name, v.Type.DType, x.Shape))
		if err != nil {
			t.Fatal(err)
		}
		if got := Decode(b, v.Type.DType); slices.Compare(got, x.Data) != 0 {
			t.Errorf("%s: %s read back differs", path, v.Name)
		}
	}
}

// TestRefcheckPy runs bench/refcheck.py over cases written as refdump
// writes them, where a Python with PyTorch is at hand (the safetensors
// package is stood in for by testdata/pysafetensors when missing), with
// stand-ins for our kernels' results: the float64 interpreter's, rounded
// to each result's dtype, which must pass (their error is the rounding
// alone), and, as the unfused plan of Llama-3-8B (shrunk), the layer with
// attention's output scaled by 1.1, which must fail. Llama-3-8B's
// hand-written reference must agree with the exported program, and one
// program's main must run.
func TestRefcheckPy(t *testing.T) {
	refcheck := refcheckPy(t)
	root := t.TempDir()
	m := &RefManifest{Seed: DefaultSeed}
	picked := map[string]map[string]int64{
		"tiny":         {"B": 2, "S": 1, "T": 7},
		"llama3_8b":    {"B": 2, "S": 3, "T": 5},
		"paged_decode": {"B": 3, "S": 1, "T": 21},
	}
	for i, c := range RefCases(DefaultSeed) {
		dims, ok := picked[c.Spec]
		if !ok || c.Full {
			continue
		}
		delete(picked, c.Spec)
		c.Dims = dims
		rc, err := PrepareRefCase(root, RefSubdir(i, c), c)
		if err != nil {
			t.Fatal(err)
		}
		ours := roundedResults(t, rc, rc.Graph)
		if err := rc.WritePlanResults("fused", ours); err != nil {
			t.Fatal(err)
		}
		if c.Spec == "llama3_8b" {
			ours = roundedResults(t, rc, scaledAttention(t, rc.Graph, 1.1))
		}
		if err := rc.WritePlanResults("unfused", ours); err != nil {
			t.Fatal(err)
		}
		m.Cases = append(m.Cases, rc.Entry)
	}
	if err := WriteRefManifest(root, m); err != nil {
		t.Fatal(err)
	}
	code, sum, out := refcheck(root)
	if code != 1 || sum.Passed {
		t.Fatalf("refcheck.py: exit %d, passed %v, want 1 and false: the scaled attention fails\n%s", code, sum.Passed, out)
	}
	if len(sum.Rows) != 12 || len(sum.Errors) > 0 {
		t.Errorf("%d rows, want 12 (y and kv of 3 cases, each of 2 plans); errors %v\n%s", len(sum.Rows), sum.Errors, out)
	}
	for _, r := range sum.Rows {
		wantFail := r.Plan == "unfused" && r.Result == "y" && strings.HasPrefix(r.Case, "llama3_8b/")
		if (r.Status == "fail") != wantFail {
			t.Errorf("%s %s %s: %s (ratio %v), want fail: %v", r.Case, r.Plan, r.Result, r.Status, r.Ratio, wantFail)
		}
	}
	checks := map[string]bool{}
	for _, c := range sum.Checks {
		checks[c.Check] = c.Pass
	}
	for _, want := range []string{"references agree (y)", "references agree (kv)", "program main"} {
		if pass, ok := checks[want]; !ok || !pass {
			t.Errorf("check %q: ran %v, passed %v\n%s", want, ok, pass, out)
		}
	}
}

// TestRefcheckPySkips runs bench/refcheck.py (as TestRefcheckPy does)
// over a case of tiny whose fused plan's results are the interpreter's,
// rounded, which pass, and whose unfused plan refdump skipped, as it does
// when it cannot read a result: the run must fail (exit 1, passed false)
// and say that a plan was not checked; with both plans skipped, also that
// no comparison passed. A skip is never a pass.
func TestRefcheckPySkips(t *testing.T) {
	refcheck := refcheckPy(t)
	root := t.TempDir()
	c := refCase(t, "tiny", map[string]int64{"B": 2, "S": 1, "T": 7})
	rc, err := PrepareRefCase(root, RefSubdir(0, c), c)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.WritePlanResults("fused", roundedResults(t, rc, rc.Graph)); err != nil {
		t.Fatal(err)
	}
	const skip = "%55.y has no device buffer"
	rc.Entry.Plans["unfused"] = RefPlan{Skip: skip}
	for _, tc := range []struct {
		name string
		why  []string
	}{
		{"unfused skipped", []string{"1 plan(s) not checked, first " + c.Name() + " unfused: " + skip}},
		{"both skipped", []string{"2 plan(s) not checked", "no comparison passed"}},
	} {
		if tc.name == "both skipped" {
			rc.Entry.Plans["fused"] = RefPlan{Skip: skip}
		}
		if err := WriteRefManifest(root, &RefManifest{Seed: DefaultSeed, Cases: []*RefEntry{rc.Entry}}); err != nil {
			t.Fatal(err)
		}
		code, sum, out := refcheck(root)
		if code != 1 || sum.Passed {
			t.Errorf("%s: exit %d, passed %v, want 1 and false\n%s", tc.name, code, sum.Passed, out)
		}
		why := strings.Join(sum.Why, "; ")
		for _, w := range tc.why {
			if !strings.Contains(why, w) || !strings.Contains(out, "verdict: FAIL: ") {
				t.Errorf("%s: the verdict %q does not say %q\n%s", tc.name, why, w, out)
			}
		}
	}
}

// refcheckSummary is what the tests read of refcheck.json.
type refcheckSummary struct {
	Passed bool     `json:"passed"`
	Why    []string `json:"why"`
	Rows   []struct {
		Case, Plan, Result, Status string
		Ratio                      any
	} `json:"rows"`
	Checks []struct {
		Case, Check string
		Pass        bool
	} `json:"checks"`
	Errors []any `json:"errors"`
}

// refcheckPy returns a function that runs bench/refcheck.py on the CPU
// over a directory refdump's way and returns its exit status, its
// refcheck.json and its output, where a Python with PyTorch is at hand
// (FUSER_PYTHON, else python3; the safetensors package is stood in for by
// testdata/pysafetensors when missing), and skips t otherwise.
func refcheckPy(t *testing.T) func(root string) (int, refcheckSummary, string) {
	t.Helper()
	py := os.Getenv("FUSER_PYTHON")
	if py == "" {
		py = "python3"
	}
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skipf("no PyTorch for %s (set FUSER_PYTHON to a python3 that has it): refcheck.py runs on the device only", py)
	}
	env := os.Environ()
	if err := exec.Command(py, "-c", "import safetensors.torch").Run(); err != nil {
		stand, err := filepath.Abs("testdata/pysafetensors")
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, "PYTHONPATH="+stand)
	}
	return func(root string) (int, refcheckSummary, string) {
		t.Helper()
		os.Remove(filepath.Join(root, "refcheck.json"))
		cmd := exec.Command(py, "../bench/refcheck.py", root, "--device", "cpu")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		var sum refcheckSummary
		b, rerr := os.ReadFile(filepath.Join(root, "refcheck.json"))
		if rerr == nil {
			rerr = json.Unmarshal(b, &sum)
		}
		if rerr != nil {
			t.Fatalf("refcheck.py: %v, refcheck.json: %v\n%s", err, rerr, out)
		}
		return cmd.ProcessState.ExitCode(), sum, string(out)
	}
}

// roundedResults are the float64 interpreter's results of g on rc's
// inputs, each rounded to its dtype, as device bytes by name.
func roundedResults(t *testing.T, rc *RefCase, g *ir.Graph) map[string][]byte {
	t.Helper()
	res, err := interp.Run(g, rc.Dims, rc.Inputs, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, v := range rc.Results {
		x, ok := res.Outputs[v.Name]
		if IsState(v) {
			x, ok = res.States[v.Name]
		}
		if !ok {
			t.Fatalf("no result %s", v.Name)
		}
		out[v.Name] = Encode(x.Data, v.Type.DType)
	}
	return out
}

// scaledAttention is a copy of g with the value named a (attention's
// output) multiplied by f.
func scaledAttention(t *testing.T, g *ir.Graph, f float64) *ir.Graph {
	t.Helper()
	g = g.Clone()
	for i, n := range g.Nodes {
		if n.Outs[0].Name != "a" {
			continue
		}
		a := n.Outs[0]
		next := g.Nodes[i+1]
		c, err := g.NewNode(ir.OpConst, ir.Attr{Num: f, To: a.Type.DType}, next)
		if err != nil {
			t.Fatal(err)
		}
		mul, err := g.NewNode(ir.OpMul, ir.Attr{}, next, a, c.Outs[0])
		if err != nil {
			t.Fatal(err)
		}
		g.ReplaceUses(a, mul.Outs[0])
		mul.Args[0] = a
		return g
	}
	t.Fatal("no value named a")
	return nil
}
