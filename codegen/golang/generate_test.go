package golang

import (
	"fmt"
	"go/format"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/internal/golden"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
)

func TestGenerateTiny(t *testing.T) {
	p, dims := planSpec(t, "tiny", false)
	src, err := Generate(p, dims, nil, "tiny", "kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/tiny.go.golden", src)
}

// TestGenerateAll generates every spec, fused and unfused, and the varlen
// layers (testPlans), and checks the result is gofmt-clean (the
// cuda-tagged test builds it).
func TestGenerateAll(t *testing.T) {
	for _, np := range testPlans(t) {
		src, err := Generate(np.p, np.dims, nil, np.name, "kernels.ptx")
		if err != nil {
			t.Fatalf("%s: %v", np.name, err)
		}
		formatted, err := format.Source([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", np.name, err)
		}
		if string(formatted) != src {
			t.Errorf("%s: generated code is not gofmt-clean", np.name)
		}
	}
}

// TestGenerateKernels generates from a CUDA module's description: its
// entries, parameters (here with one more leaf input, as a page table can
// be) and block are what Forward launches.
func TestGenerateKernels(t *testing.T) {
	p, dims := planSpec(t, "tiny", false)
	ks := DefaultKernels(p)
	ks[2].Entries = []string{"attn_split", "attn_reduce"}
	ks[2].Block = 64
	ks[2].Params = append([]codegen.Param{{Name: "pos", Value: p.Graph.Inputs[1]}}, ks[2].Params...)
	src, err := Generate(p, dims, ks, "tiny", "kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"attn_split",` + "\n\t\"attn_reduce\",",
		"runtime.LaunchDependent(l.kernels[2], [3]int64{1, 2, 2}, 64, 49920, s, l.bufPos.Ptr, l.bufArena.At(256), l.bufKv.Ptr, l.bufArena.At(0), d.B, d.S, d.T)",
		"runtime.LaunchDependent(l.kernels[3], [3]int64{1, 2, 2}, 64, 49920, s, l.bufPos.Ptr, l.bufArena.At(256), l.bufKv.Ptr, l.bufArena.At(0), d.B, d.S, d.T)",
		// The step's first kernel follows no kernel of the step.
		"runtime.Launch(l.kernels[0], ",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("generated code lacks %q", want)
		}
	}
}

// TestGenerateCluster: a launch in thread-block clusters (the wgmma
// GEMM's pairs) goes through runtime.LaunchWith with its attributes, the
// dependence kept.
func TestGenerateCluster(t *testing.T) {
	p, dims := planSpec(t, "tiny", false)
	c := *p
	c.Kernels = append([]*plan.Kernel(nil), p.Kernels...)
	for _, i := range []int{0, 2} {
		k := *c.Kernels[i]
		l := *k.Launch
		l.Cluster = 2
		l.Grid[0] = 4
		k.Launch = &l
		c.Kernels[i] = &k
	}
	src, err := Generate(&c, dims, nil, "tiny", "kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"runtime.LaunchWith(l.kernels[0], [3]int64{4, 1, 1}, ",
		"runtime.LaunchOpts{Cluster: 2}, s, ",
		"runtime.LaunchWith(l.kernels[2], [3]int64{4, 2, 2}, ",
		"runtime.LaunchOpts{Dependent: true, Cluster: 2}, s, ",
		"clusters of 2",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("generated code lacks %q", want)
		}
	}
	if _, err := format.Source([]byte(src)); err != nil {
		t.Fatal(err)
	}
}

func TestGenerateErrors(t *testing.T) {
	p, dims := planSpec(t, "tiny", false)
	missingDim := DefaultKernels(p)
	missingDim[0].Params = append(missingDim[0].Params, codegen.Param{Name: "dim_Q", Dim: "Q"})
	noBlock := DefaultKernels(p)
	noBlock[1].Block = 0
	empty := *p
	empty.Kernels = append([]*plan.Kernel(nil), p.Kernels...)
	k := *empty.Kernels[2]
	l := *k.Launch
	l.Grid[1] = 0
	k.Launch = &l
	empty.Kernels[2] = &k
	for _, tc := range []struct {
		name      string
		dims      map[string]int64
		kernels   []Kernel
		pkg, ptx  string
		wantError string
	}{
		{"package", dims, nil, "main", "kernels.ptx", "cannot name a package"},
		{"ptx", dims, nil, "tiny", "a/b.ptx", "cannot name the embedded PTX"},
		{"unbound", map[string]int64{"B": 1, "S": 1}, nil, "tiny", "k.ptx", "dim T is not bound"},
		{"count", dims, DefaultKernels(p)[:2], "tiny", "k.ptx", "2 kernel descriptions for 7 plan kernels"},
		{"dim", dims, missingDim, "tiny", "k.ptx", "no dim Q"},
		{"block", dims, noBlock, "tiny", "k.ptx", "no block size"},
		{"grid", dims, nil, "tiny", "k.ptx", "has an empty grid"},
	} {
		pl := p
		if tc.name == "grid" {
			pl = &empty
		}
		_, err := Generate(pl, tc.dims, tc.kernels, tc.pkg, tc.ptx)
		if err == nil || !strings.Contains(err.Error(), tc.wantError) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.wantError)
		}
	}
}

// TestGenerateFold: a plan with a load stage (gemma2_softcap: 1 + w on
// every norm weight, q/k/v and gate/up joined) gives each folded value a
// buffer, launches the load kernels from Fold and no more from forward, and
// LoadSafetensors and InitRandom end by running Fold.
func TestGenerateFold(t *testing.T) {
	p, dims := planSpec(t, "gemma2_softcap", false)
	src, err := Generate(p, dims, nil, "gemma2_softcap", "kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	fold := funcBody(t, src, "func (l *Layer) Fold() error {")
	forward := funcBody(t, src, "func (l *Layer) forward(s *runtime.Stream, d Dims) error {")
	load, step := 0, 0
	for i, k := range p.Kernels {
		fn := "Launch"
		if k.Launch.Dependent {
			fn = "LaunchDependent"
		}
		launch := fmt.Sprintf("runtime.%s(l.kernels[%d],", fn, i)
		inFold, inForward := strings.Contains(fold, launch), strings.Contains(forward, launch)
		if k.Load {
			load++
		} else {
			step++
		}
		if inFold != k.Load || inForward == k.Load {
			t.Errorf("kernel %s (load %v): in Fold %v, in forward %v", k.Name, k.Load, inFold, inForward)
		}
	}
	if load != 6 || step != 8 {
		t.Errorf("%d load and %d step kernels, want 6 and 8", load, step)
	}
	for _, want := range []string{
		"bufWnAiFolded runtime.Buffer",
		"bufWqWkWv     runtime.Buffer",
		"bufWgWu       runtime.Buffer",
		"return l.stream.Synchronize()",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("generated code lacks %q", want)
		}
	}
	for _, fn := range []string{"func (l *Layer) LoadSafetensors(path string) error {", "func (l *Layer) InitRandom(seed uint64) error {"} {
		body := strings.TrimSpace(funcBody(t, src, fn))
		if !strings.HasSuffix(body, "return l.Fold()") {
			t.Errorf("%s does not end by running the load stage:\n%s", fn, body)
		}
		if !strings.HasPrefix(body, "if err := l.allocParams(); err != nil {") {
			t.Errorf("%s does not begin by allocating the released params again:\n%s", fn, body)
		}
	}
	// ReleaseParams frees, and allocParams allocates again, exactly the
	// params no step kernel reads: the norm weights folded into 1 + w and
	// the sibling weights joined, not wo and wd.
	var only []string
	for _, v := range p.LoadOnly() {
		only = append(only, v.Name)
	}
	if got, want := strings.Join(only, " "), "wn_ai wq wk wv wn_ao wn_mi wg wu wn_mo"; got != want {
		t.Errorf("load-only params %q, want %q", got, want)
	}
	release := funcBody(t, src, "func (l *Layer) ReleaseParams() error {")
	alloc := funcBody(t, src, "func (l *Layer) allocParams() error {")
	for _, name := range []string{"WnAi", "Wq", "Wk", "Wv", "WnAo", "WnMi", "Wg", "Wu", "WnMo", "Wo", "Wd"} {
		loadOnly := name != "Wo" && name != "Wd"
		if strings.Contains(release, "l.buf"+name+".Free()") != loadOnly {
			t.Errorf("ReleaseParams frees buf%s: %v, want %v", name, !loadOnly, loadOnly)
		}
		if strings.Contains(alloc, "l.buf"+name+", err = l.ctx.Alloc(") != loadOnly {
			t.Errorf("allocParams allocates buf%s: %v, want %v", name, !loadOnly, loadOnly)
		}
	}
}

// TestGenerateNoFold: a plan without a load stage declares no Fold.
func TestGenerateNoFold(t *testing.T) {
	p, dims := planSpec(t, "llama3_8b", false)
	src, err := Generate(p, dims, nil, "llama3_8b", "kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Fold", "ReleaseParams", "allocParams"} {
		if strings.Contains(src, name) {
			t.Errorf("a plan without a load stage has %s", name)
		}
	}
}

// funcBody returns the body of the generated function whose declaration
// line is decl.
func funcBody(t *testing.T, src, decl string) string {
	t.Helper()
	i := strings.Index(src, decl)
	if i < 0 {
		t.Fatalf("no %q in the generated code", decl)
	}
	body := src[i+len(decl):]
	end := strings.Index(body, "\n}\n")
	if end < 0 {
		t.Fatalf("%q has no end", decl)
	}
	return body[:end]
}

// TestGenerateEmptyCache: a layer planned over an empty cache (T=0, a
// prefill of the whole prompt) generates, and its dims check takes 0 to
// Planned (the dims check refused it before).
func TestGenerateEmptyCache(t *testing.T) {
	_, dims := planSpec(t, "llama3_8b", false)
	dims["T"] = 0
	filename, src, _ := specs.Source("llama3_8b")
	g, err := frontend.Parse(filename, src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Generate(st.Plan, dims, nil, "llama3_8b", "kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	code := string(out)
	for _, want := range []string{"outside 0..%d", "d.T < 0 || d.T > Planned.T", "T: 0}"} {
		if !strings.Contains(code, want) {
			t.Errorf("generated code lacks %q", want)
		}
	}
}
