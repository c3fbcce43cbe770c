//go:build cuda

package gpu

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/runtime"
)

// The on-device suite. Build it here and run it on the GPU machine (make
// gpu-bundle; .gpu/run.sh): go test -c -tags cuda ./gpu, then
//
//	gpu.test -test.v -kernels .gpu/kernels [-cases REGEXP] [-summary FILE] [-specs DIR]
//
// For every case of Cases (every embedded spec, shrunk, at four kinds of
// dims; the attention layers with ragged and paged caches; Llama-3-8B at
// full size), fused and unfused plan:
//
//   - every kernel, alone: its inputs uploaded from the per-kernel reference
//     (interp.RunPlan, rounded), its outputs poisoned with NaN, then
//     launched; every output element compared (see Thresholds). A kernel
//     codegen/cuda cannot generate is a skipped subtest whose message is
//     the generator's error.
//   - layer: every kernel chained on the GPU from the leaves; the outputs
//     and the states after the step against the float64 interpreter. A
//     kernel not generated is replaced by the reference's values and the
//     subtest is then skipped after the comparison (it still fails on a
//     difference), never passed.
//   - graph: the step captured into a CUDA graph and replayed must equal
//     the eager launches bit for bit (outputs, states and the arena); plans
//     with kernels not generated skip it.
//
// and fused_vs_unfused compares the two plans' layer outputs.

var (
	flagKernels = flag.String("kernels", "", "directory of compiled kernel images (default $FUSER_KERNELS, else .gpu/kernels up from here)")
	flagSeed    = flag.Int64("seed", DefaultSeed, "seed the cases are drawn from")
	flagCases   = flag.String("cases", "", "run only the cases whose name (spec/size/dims) matches one of these regexps (separated by spaces; each must match a case)")
	flagNVCC    = flag.Bool("nvcc", true, "compile images missing from -kernels with nvcc, when there is one")
	flagSummary = flag.String("summary", "", "write a JSON summary of every check to this file")
	flagSpecs   = flag.String("specs", "", "also run the spec files of this directory, each at the dims of its '# dims:' line (SpecCases)")
	flagMutate  = flag.String("mutate", "", "a mutation run: KERNEL_REGEXP=SCALE scales what the matching kernels write after each eager launch (ParseMutation), so that the checks must fail")
)

func kernelsDir() string {
	if *flagKernels != "" {
		return *flagKernels
	}
	if d := os.Getenv("FUSER_KERNELS"); d != "" {
		return d
	}
	if exe, err := os.Executable(); err == nil {
		if d := filepath.Join(filepath.Dir(exe), "kernels"); isDir(d) {
			return d
		}
	}
	for d, _ := os.Getwd(); d != "/" && d != "."; d = filepath.Dir(d) {
		if k := filepath.Join(d, ".gpu", "kernels"); isDir(k) {
			return k
		}
	}
	return ".gpu/kernels"
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// caseData is one case's plans and references, computed on the CPU in the
// background.
type caseData struct {
	c     Case
	plans [2]*Plan // fused, unfused
	refs  [2]*Reference
	err   error
	done  chan struct{}
}

func prepareCase(c Case) *caseData {
	cd := &caseData{c: c, done: make(chan struct{})}
	go func() {
		defer close(cd.done)
		cd.err = cd.prepare()
	}()
	return cd
}

var cpuSlots = make(chan struct{}, max(1, goruntime.NumCPU()/2))

func (cd *caseData) prepare() error {
	cpuSlots <- struct{}{}
	defer func() { <-cpuSlots }()
	g, err := cd.c.Graph()
	if err != nil {
		return err
	}
	for i, fused := range []bool{true, false} {
		if cd.plans[i], err = NewPlan(g, cd.c.Dims, fused); err != nil {
			return err
		}
	}
	inputs, err := cd.c.Inputs(g)
	if err != nil {
		return fmt.Errorf("RandomInputs: %w", err)
	}
	layer, err := RunLayer(g, cd.plans[0].Dims, inputs)
	if err != nil {
		return err
	}
	for i, p := range cd.plans {
		if cd.refs[i], err = NewReference(p, inputs, layer); err != nil {
			return err
		}
	}
	return nil
}

// check is one line of the summary.
type check struct {
	Case     string  `json:"case"`
	Plan     string  `json:"plan"`
	Name     string  `json:"name"`
	Strategy string  `json:"strategy,omitempty"`
	Status   string  `json:"status"` // pass, fail, skip
	Ratio    float64 `json:"worst_over_tol,omitempty"`
	Detail   string  `json:"detail,omitempty"`
}

type summary struct {
	mu     sync.Mutex
	Device runtime.DeviceInfo `json:"device"`
	Seed   int64              `json:"seed"`
	Checks []check            `json:"checks"`
}

func (s *summary) add(c check) {
	if math.IsInf(c.Ratio, 0) || math.IsNaN(c.Ratio) {
		c.Ratio = -1
	}
	s.mu.Lock()
	s.Checks = append(s.Checks, c)
	s.mu.Unlock()
}

// suite holds what the subtests share.
type suite struct {
	dev *Device
	sum *summary
}

// run is t.Run with the context bound to the subtest's goroutine.
func (s *suite) run(t *testing.T, name string, f func(t *testing.T)) bool {
	return t.Run(name, func(t *testing.T) {
		release, err := s.dev.Ctx.Bind()
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		f(t)
	})
}

// testDevice opens the device with the bundle's kernel images (and nvcc,
// with -nvcc and when there is one, for any missing); the test's cleanup
// closes it.
func testDevice(t *testing.T) (*Device, *Images) {
	t.Helper()
	images := &Images{Dir: kernelsDir(), Log: t.Logf}
	if *flagNVCC {
		images.NVCC = FindNVCC()
	}
	if _, err := os.Stat(filepath.Join(images.Dir, ManifestFile)); err != nil && images.NVCC == "" {
		t.Fatalf("no kernel images in %s and no nvcc: build them with make gpu-bundle", images.Dir)
	}
	dev, err := NewDevice(images)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Error(err)
		}
	})
	return dev, images
}

func TestSuite(t *testing.T) {
	dev, images := testDevice(t)
	info, err := dev.Ctx.Info()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("device %s: %d SMs, %d MB L2; images from %s (%s); nvcc fallback %q", info.Name, info.SMs, info.L2Bytes>>20, images.Dir, images.Manifest().Compiler, images.NVCC)
	s := &suite{dev: dev, sum: &summary{Device: info, Seed: *flagSeed}}
	if dev.Mutation, err = ParseMutation(*flagMutate); err != nil {
		t.Fatal(err)
	}
	if dev.Mutation != nil {
		t.Logf("mutation run: %s; every check that sees the mutated kernels should fail", dev.Mutation)
	}
	all := Cases(*flagSeed)
	if *flagSpecs != "" {
		files, err := SpecCases(*flagSpecs, *flagSeed)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, files...)
	}
	cases, err := SelectCases(all, *flagCases)
	if err != nil {
		t.Fatal(err)
	}
	// The CPU references are computed a few cases ahead of the GPU.
	const ahead = 6
	data := make([]*caseData, len(cases))
	start := func(i int) {
		if i < len(data) && data[i] == nil {
			data[i] = prepareCase(cases[i])
		}
	}
	for i, c := range cases {
		for j := i; j < i+ahead; j++ {
			start(j)
		}
		cd := data[i]
		s.run(t, c.Name(), func(t *testing.T) {
			<-cd.done
			if cd.err != nil {
				t.Fatalf("%s: %v", c.What, cd.err)
			}
			t.Logf("%s: %s at %s (seed %d)", c.What, c.Spec, DimsString(cd.plans[0].Dims), c.Seed)
			var outs [2]map[string][]float64
			subst := ""
			for pi, p := range cd.plans {
				s.run(t, PlanName(p.Fused), func(t *testing.T) {
					outs[pi] = s.plan(t, c, p, cd.refs[pi], cd.refs[1].Kernels)
				})
				if pi == 0 && !p.Generated() {
					subst = p.NotGenerated()
				}
			}
			s.run(t, "fused_vs_unfused", func(t *testing.T) { s.fusedVsUnfused(t, c, cd, outs, subst) })
		})
		data[i] = nil // free the references
	}
	s.report(t)
}

// plan runs the checks of one plan and returns the layer's outputs as the
// GPU computed them (nil when the layer did not run); base is the error
// budget's baseline (LayerBudget).
func (s *suite) plan(t *testing.T, c Case, p *Plan, ref *Reference, base *interp.Result) map[string][]float64 {
	name := PlanName(p.Fused)
	l, err := s.dev.Load(p)
	if err != nil {
		s.sum.add(check{Case: c.Name(), Plan: name, Name: "load", Status: "fail", Detail: err.Error()})
		t.Fatalf("load: %v", err)
	}
	in, err := l.Alloc()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Free()
	if err := in.Reset(ref); err != nil {
		t.Fatal(err)
	}
	for i, k := range p.Kernels {
		s.run(t, k.Plan.Name, func(t *testing.T) {
			ck := check{Case: c.Name(), Plan: name, Name: k.Plan.Name, Strategy: k.Plan.Strategy.String()}
			if k.Err != nil {
				ck.Status, ck.Detail = "skip", k.Err.Error()
				s.sum.add(ck)
				t.Skipf("not generated: %v", k.Err)
			}
			ratio, err := s.kernel(t, l, in, ref, i)
			ck.Status, ck.Ratio = "pass", ratio
			if err != nil || t.Failed() {
				ck.Status = "fail"
				if err != nil {
					ck.Detail = err.Error()
				}
			}
			s.sum.add(ck)
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	var outs map[string][]float64
	s.run(t, "layer", func(t *testing.T) {
		ck := check{Case: c.Name(), Plan: name, Name: "layer"}
		lr, err := s.layer(t, l, in, ref, base)
		outs = lr.outs
		bc := check{Case: c.Name(), Plan: name, Name: "budget", Ratio: lr.budget}
		ck.Ratio = lr.tol
		for _, x := range []struct {
			ck  *check
			bad bool
		}{{&ck, lr.tolBad}, {&bc, lr.budgetBad}} {
			switch {
			case err != nil || x.bad:
				x.ck.Status = "fail"
				if err != nil {
					x.ck.Detail = err.Error()
				}
			case len(lr.subst) > 0:
				x.ck.Status, x.ck.Detail = "skip", "substituted by the reference: "+strings.Join(lr.subst, ", ")
			case x.ck == &bc && !lr.budgeted:
				x.ck.Status, x.ck.Detail = "skip", "no budget: every result is computed in f32 only, or the baseline is not finite"
			default:
				x.ck.Status = "pass"
			}
			s.sum.add(*x.ck)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(lr.subst) > 0 && !t.Failed() {
			t.Skipf("outputs within tolerance (worst %.2f×tol) and budget (%.2f), but with %s computed by the CPU reference: codegen/cuda does not generate them yet", lr.tol, lr.budget, strings.Join(lr.subst, ", "))
		}
	})
	s.run(t, "graph", func(t *testing.T) {
		ck := check{Case: c.Name(), Plan: name, Name: "graph"}
		if s.dev.Mutation != nil {
			ck.Status, ck.Detail = "skip", "a mutation run: the mutation cannot run inside a captured graph"
			s.sum.add(ck)
			t.Skip(ck.Detail)
		}
		if !p.Generated() {
			ck.Status, ck.Detail = "skip", "not generated: "+p.NotGenerated()
			s.sum.add(ck)
			t.Skipf("%s not generated: a graph of the whole step needs every kernel", p.NotGenerated())
		}
		err := s.graph(t, l, in, ref)
		ck.Status = "pass"
		switch {
		case err != nil:
			ck.Status, ck.Detail = "fail", err.Error()
		case t.Failed():
			ck.Status = "fail"
		}
		s.sum.add(ck)
		if err != nil {
			t.Fatal(err)
		}
	})
	return outs
}

// kernel runs kernel i of l alone on reference inputs and compares its
// outputs; it returns the worst err/tol.
func (s *suite) kernel(t *testing.T, l *Loaded, in *Instance, ref *Reference, i int) (float64, error) {
	k := l.P.Kernels[i]
	appended := AppendedBefore(l.P, i)
	written := Written(k.Plan)
	isWritten := map[*ir.Value]bool{}
	for _, w := range written {
		isWritten[w] = true
	}
	// Poison the outputs, then write the inputs: an input overlapping an
	// output in the arena is a memory-plan bug, reported as such.
	type span struct{ lo, hi int64 }
	var outSpans []span
	for _, w := range written {
		if IsState(w) {
			continue
		}
		if err := in.Poison(w); err != nil {
			return 0, err
		}
		if b, _ := l.Layout.Buf(w); b.Index < 0 {
			outSpans = append(outSpans, span{b.Offset, b.Offset + b.Bytes})
		}
	}
	seen := map[*ir.Value]bool{}
	for _, prm := range k.CUDA.Params {
		v := prm.Value
		if v == nil || seen[v] {
			continue
		}
		seen[v] = true
		b, _ := l.Layout.Buf(v)
		var data []byte
		var err error
		switch {
		case IsState(v):
			data, err = ref.StateBytes(v, appended[v])
		case isWritten[v] || b.Role == "input" || b.Role == "param":
			continue // outputs poisoned; leaves uploaded by Reset and never written
		default:
			for _, o := range outSpans {
				if b.Index < 0 && b.Offset < o.hi && o.lo < b.Offset+b.Bytes {
					return 0, fmt.Errorf("input %s [%d, %d) overlaps an output in the arena", v.Ref(), b.Offset, b.Offset+b.Bytes)
				}
			}
			data, err = ref.ValueBytes(v)
		}
		if err != nil {
			return 0, err
		}
		if err := in.Upload(v, data); err != nil {
			return 0, err
		}
	}
	if err := s.dev.Ctx.Synchronize(); err != nil {
		return 0, err
	}
	if err := l.Launch(in, i, s.dev.Stream); err != nil {
		return 0, err
	}
	if err := s.dev.Stream.Synchronize(); err != nil {
		return 0, fmt.Errorf("%s: %w", k.Plan.Name, err)
	}
	worst := 0.0
	for _, w := range written {
		got, err := in.Download(w)
		if err != nil {
			return 0, err
		}
		var want []float64
		var valid func(int) bool
		what := w.Ref()
		if IsState(w) {
			b, err := ref.StateBytes(w, true)
			if err != nil {
				return 0, err
			}
			// A ragged cache fills the start of its buffer.
			want, what = Decode(b, w.Type.DType), "state "+w.Name+" after the append"
			got = got[:min(len(got), len(b))]
		} else {
			if Unwritten(got) {
				t.Errorf("%s %s: not written (every byte still the poison)", what, w.Type.DType)
			}
			if want, err = ref.ValueData(w); err != nil {
				return 0, err
			}
			if valid, err = ref.Valid(w); err != nil {
				return 0, err
			}
		}
		d := Compare(Decode(got, w.Type.DType), want, valid, KernelTolerance(k.Plan, w.Type.DType))
		worst = max(worst, d.Ratio())
		if d.OK() {
			t.Logf("%s %s: %s", what, w.Type.DType, d)
		} else {
			t.Errorf("%s %s: %s", what, w.Type.DType, d)
		}
	}
	return worst, nil
}

// layer runs every kernel chained from the leaves, replacing the kernels
// not generated by the reference's values, and compares the outputs and
// appended states with the float64 interpreter, each within its dtype's
// tolerance and its error budget (LayerBudget against base).
func (s *suite) layer(t *testing.T, l *Loaded, in *Instance, ref *Reference, base *interp.Result) (layerResult, error) {
	var lr layerResult
	if err := in.Reset(ref); err != nil {
		return lr, err
	}
	if err := s.dev.Ctx.Synchronize(); err != nil {
		return lr, err
	}
	for i, k := range l.P.Kernels {
		if l.Generated(i) {
			if err := l.Launch(in, i, s.dev.Stream); err != nil {
				return lr, err
			}
			continue
		}
		lr.subst = append(lr.subst, k.Plan.Name)
		if err := s.dev.Stream.Synchronize(); err != nil {
			return lr, err
		}
		for _, w := range Written(k.Plan) {
			if _, ok := l.Layout.Buf(w); !ok {
				// No generated kernel reads it (NewLayout gives each of
				// their parameters a buffer): an intermediate between
				// kernels that are not generated, such as the unfused
				// scores of packed attention.
				continue
			}
			var data []byte
			var err error
			if IsState(w) {
				data, err = ref.StateBytes(w, true)
			} else {
				data, err = ref.ValueBytes(w)
			}
			if err == nil {
				err = in.Upload(w, data)
			}
			if err != nil {
				return lr, fmt.Errorf("substituting %s: %w", k.Plan.Name, err)
			}
		}
		if err := s.dev.Ctx.Synchronize(); err != nil {
			return lr, err
		}
	}
	if err := s.dev.Stream.Synchronize(); err != nil {
		return lr, err
	}
	lr.outs = map[string][]float64{}
	cmp := func(v *ir.Value, what string, want *interp.Tensor) error {
		b, err := in.Download(v)
		if err != nil {
			return err
		}
		if want == nil {
			return fmt.Errorf("no reference for %s", what)
		}
		if !IsState(v) && Unwritten(b) {
			lr.tolBad = true
			t.Errorf("%s: not written (every byte still the poison)", what)
		}
		got := Decode(b, v.Type.DType)
		got = got[:min(len(got), len(want.Data))] // a ragged cache fills the start of its buffer
		d := Compare(got, want.Data, nil, LayerToleranceOf(v))
		lr.tol = max(lr.tol, d.Ratio())
		if d.OK() {
			t.Logf("%s: %s", what, d)
		} else {
			lr.tolBad = true
			t.Errorf("%s: %s", what, d)
		}
		bd, budgeted, err := LayerBudget(v, got, ref.Layer, base)
		switch {
		case err != nil:
			return err
		case !budgeted:
			t.Logf("%s: no error budget (computed in f32 only)", what)
		case bd.NA != "":
			t.Logf("%s, error budget: %s", what, bd)
		case bd.OK():
			lr.budgeted = true
			lr.budget = max(lr.budget, bd.Ratio())
			t.Logf("%s, error budget: %s", what, bd)
		default:
			lr.budget, lr.budgeted, lr.budgetBad = max(lr.budget, bd.Ratio()), true, true
			t.Errorf("%s, error budget: %s", what, bd)
		}
		lr.outs[what] = got
		return nil
	}
	for _, v := range l.P.Results() { // as refdump reads them (Device.Step)
		what, want := "output "+v.Name, ref.Layer.Outputs[v.Name]
		if IsState(v) {
			what, want = "state "+v.Name, ref.Layer.States[v.Name]
		}
		if err := cmp(v, what, want); err != nil {
			return lr, err
		}
	}
	return lr, nil
}

// layerResult is what the layer check saw: the outputs, the kernels
// substituted by the reference, the worst err/tol and err/budget, whether
// the budget applied to some output, and whether some output failed its
// tolerance (or was not written) or its budget.
type layerResult struct {
	outs              map[string][]float64
	subst             []string
	tol, budget       float64
	budgeted          bool
	tolBad, budgetBad bool
}

// graph checks a captured step replays bit for bit as the eager one.
func (s *suite) graph(t *testing.T, l *Loaded, in *Instance, ref *Reference) error {
	eager, err := s.step(l, in, ref, false)
	if err != nil {
		return err
	}
	replay, err := s.step(l, in, ref, true)
	if err != nil {
		return err
	}
	for _, snap := range []map[string][]byte{eager, replay} {
		for _, o := range l.P.Plan.Graph.Outputs {
			if name := "output " + o.Name; Unwritten(snap[name]) {
				t.Errorf("%s: not written by the step (every byte still the poison)", name)
			}
		}
	}
	bad := false
	for name, e := range eager {
		if at := Bitwise(e, replay[name]); at >= 0 {
			bad = true
			again, err := s.step(l, in, ref, false)
			det := "eager launches are deterministic"
			if err == nil && Bitwise(e, again[name]) >= 0 {
				det = "eager launches differ between runs too"
			}
			t.Errorf("%s: graph replay differs from eager launch at byte %d (%s)", name, at, det)
		}
	}
	if !bad {
		n := 0
		for _, e := range eager {
			n += len(e)
		}
		t.Logf("graph replay equals eager launch bit for bit: %d bytes of outputs, states and arena", n)
	}
	return nil
}

// step runs the whole step from the leaves, eagerly or as a captured
// graph (the load stage eagerly before it, as the generated Layer folds
// once), and returns the outputs, the states and the arena.
func (s *suite) step(l *Loaded, in *Instance, ref *Reference, graph bool) (map[string][]byte, error) {
	if err := in.Reset(ref); err != nil {
		return nil, err
	}
	if err := s.dev.Ctx.Synchronize(); err != nil {
		return nil, err
	}
	st := s.dev.Stream
	if err := l.Fold(in, st); err != nil {
		return nil, err
	}
	if graph {
		e, err := runtime.Capture(st, func() error { return l.Forward(in, st) })
		if err != nil {
			return nil, err
		}
		defer e.Destroy()
		if err := e.Launch(st); err != nil {
			return nil, err
		}
	} else if err := l.Forward(in, st); err != nil {
		return nil, err
	}
	if err := st.Synchronize(); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for i, b := range l.Layout.Own {
		if b.Role == "output" || b.Role == "state" {
			data := make([]byte, b.Bytes)
			if err := in.Own[i].CopyOutAt(0, data); err != nil {
				return nil, err
			}
			out[b.Role+" "+b.Value.Name] = data
		}
	}
	arena := make([]byte, in.Arena.Bytes)
	if err := in.Arena.CopyOutAt(0, arena); err != nil {
		return nil, err
	}
	out["arena"] = arena
	return out, nil
}

func (s *suite) fusedVsUnfused(t *testing.T, c Case, cd *caseData, outs [2]map[string][]float64, subst string) {
	ck := check{Case: c.Name(), Plan: "both", Name: "fused_vs_unfused"}
	if outs[0] == nil || outs[1] == nil {
		ck.Status, ck.Detail = "skip", "a layer run failed"
		s.sum.add(ck)
		t.Skip("a plan's layer did not run")
	}
	worst := 0.0
	for _, o := range cd.plans[0].Plan.Graph.Outputs {
		key := "output " + o.Name
		d := Compare(outs[0][key], outs[1][key], nil, LayerToleranceOf(o))
		worst = max(worst, d.Ratio())
		if d.OK() {
			t.Logf("%s, fused against unfused: %s", key, d)
		} else {
			t.Errorf("%s, fused against unfused: %s", key, d)
		}
	}
	ck.Ratio = worst
	switch {
	case t.Failed():
		ck.Status = "fail"
	case subst != "":
		ck.Status, ck.Detail = "skip", "fused plan with "+subst+" from the reference"
	default:
		ck.Status = "pass"
	}
	s.sum.add(ck)
	if subst != "" && !t.Failed() {
		t.Skipf("within tolerance (worst %.2f×tol), but the fused plan ran %s on the CPU reference", worst, subst)
	}
}

// report logs counts and the worst err/tol by strategy and writes the
// summary.
func (s *suite) report(t *testing.T) {
	type agg struct {
		pass, fail, skip int
		worst            float64
	}
	by := map[string]*agg{}
	reasons := map[string]int{}
	for _, c := range s.sum.Checks {
		key := c.Name
		if c.Strategy != "" {
			key = "kernel " + c.Strategy
		}
		a := by[key]
		if a == nil {
			a = &agg{}
			by[key] = a
		}
		switch c.Status {
		case "pass":
			a.pass++
		case "fail":
			a.fail++
		default:
			a.skip++
			if c.Strategy != "" {
				reasons[c.Detail]++
			}
		}
		a.worst = max(a.worst, c.Ratio)
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%-22s %6s %6s %6s  %s\n", "check", "pass", "fail", "skip", "worst err/tol")
	for _, k := range keys {
		a := by[k]
		fmt.Fprintf(&b, "%-22s %6d %6d %6d  %.3f\n", k, a.pass, a.fail, a.skip, a.worst)
	}
	for r, n := range reasons {
		fmt.Fprintf(&b, "skipped %d kernels: %s\n", n, r)
	}
	t.Logf("summary:\n%s", b.String())
	if *flagSummary != "" {
		doc, err := json.MarshalIndent(s.sum, "", " ")
		if err == nil {
			err = os.WriteFile(*flagSummary, doc, 0o644)
		}
		if err != nil {
			t.Error(err)
		}
	}
}
