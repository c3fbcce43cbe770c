package gpu

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen/torch"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/runtime"
	"github.com/fuser-dev/fuser/specs"
)

// TestRefCases checks the external-reference check's cases: every
// shipped spec at a decode and a prefill binding, Llama-3-8B at full size
// at both, each decode layer of refDec and each ops layer of refOps once,
// every one a suite case (so that the bundle has its kernels) whose layer
// exports.
func TestRefCases(t *testing.T) {
	cases := RefCases(DefaultSeed)
	suite := map[string]bool{}
	for _, c := range Cases(DefaultSeed) {
		suite[c.Name()] = true
	}
	count := map[string]int{}
	for _, c := range cases {
		if !suite[c.Name()] {
			t.Errorf("%s is not a suite case", c.Name())
		}
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
	want := map[string]int{specs.Default + "/full": 2}
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
	var c Case
	for _, rc := range RefCases(DefaultSeed) {
		if rc.Spec == "paged_decode" {
			c = rc
			break
		}
	}
	c.Dims = map[string]int64{"B": 3, "S": 1, "T": 40}
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
