//go:build cuda

package laddercheck

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fuser-dev/fuser/gpu"
	"github.com/fuser-dev/fuser/runtime"
)

// Layer is what the check calls of a generated package's Layer; a step
// goes through Package.Step, which fills the package's own StepInputs.
type Layer interface {
	InitRandom(seed uint64) error
	Forward(stream *runtime.Stream) error
	Ladder(buckets ...int) error
	Buckets() []int
	Synchronize() error
	Counts() runtime.Counts
	Arena() runtime.Buffer
	Close() error
}

// Package is a target's generated package, as the generated main hands it
// over: its layer and planned dims, and what calls it by its own names.
type Package struct {
	Spec string
	Dims map[string]int64
	// New is the package's New at Planned but the batch dim B, set to
	// batch.
	New func(ctx *runtime.Context, batch int) (Layer, error)
	// Step is the Layer's Step with host[i], the bytes of the Layout's
	// Inputs[i], as its field of StepInputs.
	Step func(l Layer, batch int, host [][]byte) (int, error)
	// Buffers are the Layer's accessors of the Layout's Buffers, in order.
	Buffers func(l Layer) []runtime.Buffer
}

// Check drives t's ladder through pkg on ctx, with every Layer's params
// and states from InitRandom(seed) and the steps drawn from seed, and
// writes a line per step to w. A failure that stops it (the device's, or a
// package that is not t's) is among the result's failures.
func Check(ctx *runtime.Context, pkg Package, t Target, seed uint64, w io.Writer) *Result {
	res := &Result{Target: t.Name(), Spec: t.Graph.Name, Dims: t.Dims, Buckets: t.Buckets}
	if err := check(ctx, pkg, t, seed, w, res); err != nil {
		res.fail(err)
	}
	return res
}

func check(ctx *runtime.Context, pkg Package, t Target, seed uint64, w io.Writer, res *Result) (err error) {
	if pkg.Spec != t.Graph.Name || !t.SameDims(pkg.Dims) {
		return fmt.Errorf("the package of %s at %v is not the target's", pkg.Spec, pkg.Dims)
	}
	lay, err := NewLayout(t)
	if err != nil {
		return err
	}
	steps, err := lay.Steps(t, seed)
	if err != nil {
		return err
	}
	eager, err := ctx.NewStream()
	if err != nil {
		return err
	}
	r := &run{ctx: ctx, eager: eager, pkg: pkg, t: t, lay: lay, seed: seed, layers: map[int]Layer{}, res: res, w: w}
	defer func() { err = errors.Join(err, r.close()) }()
	g, err := r.layer(int(t.Dims["B"]))
	if err != nil {
		return err
	}
	if err := r.ladder(g, steps[0]); err != nil {
		return err
	}
	for _, s := range steps {
		if err := r.step(g, s); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
	}
	return nil
}

// run is one target's check.
type run struct {
	ctx   *runtime.Context
	eager *runtime.Stream
	pkg   Package
	t     Target
	lay   *Layout
	seed  uint64
	// layers are the Layers made so far, by their batch dim.
	layers map[int]Layer
	res    *Result
	w      io.Writer
}

// layer is the Layer at batch dim b, made once.
func (r *run) layer(b int) (Layer, error) {
	if l, ok := r.layers[b]; ok {
		return l, nil
	}
	l, err := r.pkg.New(r.ctx, b)
	if err != nil {
		return nil, err
	}
	r.layers[b] = l
	bufs := r.pkg.Buffers(l)
	if len(bufs) != len(r.lay.Buffers) {
		return nil, fmt.Errorf("the package hands out %d buffers for the layout's %d", len(bufs), len(r.lay.Buffers))
	}
	for i, b := range r.lay.Buffers {
		if bufs[i].Bytes < b.Bytes {
			return nil, fmt.Errorf("%s: a buffer of %d bytes for %d", b.Key(), bufs[i].Bytes, b.Bytes)
		}
	}
	return l, nil
}

// close closes every Layer made.
func (r *run) close() error {
	errs := []error{r.eager.Destroy()}
	for _, l := range r.layers {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}

// failAll records errs as failures.
func (r *run) failAll(errs []error) {
	for _, err := range errs {
		r.res.fail(err)
	}
}

// expect records a failure unless err says want.
func (r *run) expect(what string, err error, want string) {
	if err == nil || !strings.Contains(err.Error(), want) {
		r.res.fail(fmt.Errorf("%s: got %v, want an error saying %q", what, err, want))
	}
}

// ladder captures g's ladder and checks the calls around it that must
// fail, with first's inputs: Step before Ladder, Ladder again, and bad
// steps, which must enqueue nothing.
func (r *run) ladder(g Layer, first Step) error {
	_, err := r.pkg.Step(g, first.Batch, first.Host)
	r.expect("Step before Ladder", err, "Step before Ladder")
	before := g.Counts()
	if err := g.Ladder(r.t.Buckets...); err != nil {
		return err
	}
	c := g.Counts().Sub(before)
	r.res.Captured = c.Captured
	fmt.Fprintf(r.w, "%s: ladder %v captured: %d kernel launches recorded, %d run\n", r.t.Name(), r.t.Buckets, c.Captured, c.Launches())
	if c.Launches() != 0 {
		r.res.fail(fmt.Errorf("capturing the ladder ran %d launches", c.Launches()))
	}
	if got := g.Buckets(); !slices.Equal(got, r.t.Buckets) {
		r.res.fail(fmt.Errorf("Buckets() = %v, want %v", got, r.t.Buckets))
	}
	r.expect("Ladder again", g.Ladder(r.t.Buckets...), "captured already")
	rows := slices.IndexFunc(r.lay.Inputs, func(in Input) bool { return in.Kind == runtime.BatchRows })
	if rows < 0 {
		return fmt.Errorf("no step input of batch rows")
	}
	short, missing := slices.Clone(first.Host), slices.Clone(first.Host)
	short[rows], missing[rows] = short[rows][:len(short[rows])/2], nil
	before = g.Counts()
	for _, c := range []struct {
		what  string
		batch int
		host  [][]byte
		want  string
	}{
		{"a step of 0 sequences", 0, first.Host, "step of 0"},
		{"a step past the largest bucket", r.t.Buckets[len(r.t.Buckets)-1] + 1, first.Host, "largest bucket"},
		{"a step with a short input", first.Batch, short, "bytes, want"},
		{"a step with an input left out", first.Batch, missing, "bytes, want"},
	} {
		_, err := r.pkg.Step(g, c.batch, c.host)
		r.expect(c.what, err, c.want)
	}
	if c := g.Counts().Sub(before); c != (runtime.Counts{}) {
		r.res.fail(fmt.Errorf("failed steps enqueued %+v", c))
	}
	return g.Synchronize()
}

// step runs s as a graph step of g, then eagerly at its bucket and, when
// padded, at its batch, and compares.
func (r *run) step(g Layer, s Step) error {
	name := s.Name()
	failed := len(r.res.Failures)
	sr := StepResult{Step: name, Lengths: s.Lengths}
	if err := r.reset(g); err != nil {
		return err
	}
	initial, err := r.snapshot(g)
	if err != nil {
		return err
	}
	before := g.Counts()
	bucket, err := r.pkg.Step(g, s.Batch, s.Host)
	if err != nil {
		r.res.fail(fmt.Errorf("%s: graph step: %w", name, err))
		return nil
	}
	if err := g.Synchronize(); err != nil {
		return err
	}
	c := g.Counts().Sub(before)
	sr.Bucket, sr.Launches, sr.Graphs, sr.Copies = bucket, c.Launches(), c.Graphs, c.Copies
	if c.Launches() != 1 || c.Graphs != 1 || c.Kernels != 0 {
		r.res.fail(fmt.Errorf("%s: graph step: %d launches (%d graphs, %d kernels), want exactly one graph launch", name, c.Launches(), c.Graphs, c.Kernels))
	}
	if bucket != s.Bucket {
		r.res.fail(fmt.Errorf("%s: bucket %d, want %d", name, bucket, s.Bucket))
	}
	graph, err := r.snapshot(g)
	if err != nil {
		return err
	}
	r.failAll(r.lay.Written(name+": graph step", initial, graph, s.Batch))
	padded, launches, err := r.eagerStep(bucket, s)
	if err != nil {
		return err
	}
	sr.EagerLaunches = launches
	r.failAll(r.lay.Written(name+": eager step at the bucket", initial, padded, s.Batch))
	n, errs := Compare(name+": graph step against eager at the bucket", padded, graph, nil)
	sr.PaddedBytes = n
	r.failAll(errs)
	if s.Batch < bucket {
		plain, _, err := r.eagerStep(s.Batch, s)
		if err != nil {
			return err
		}
		r.failAll(r.lay.Written(name+": unpadded eager step", initial, plain, s.Batch))
		m, errs := Compare(name+": graph step against the unpadded eager step", plain, graph, r.lay.RealRows(s.Batch))
		sr.UnpaddedBytes = m
		r.failAll(errs)
	}
	r.res.Steps = append(r.res.Steps, sr)
	verdict := "ok"
	if len(r.res.Failures) > failed {
		verdict = "FAIL"
	}
	fmt.Fprintf(r.w, "  %s %s (lengths %v): bucket %d, %d launch (%d graph), %d copies; against eager at the bucket (%d launches): %d bytes compared",
		verdict, name, s.Lengths, bucket, sr.Launches, sr.Graphs, sr.Copies, sr.EagerLaunches, sr.PaddedBytes)
	if sr.UnpaddedBytes > 0 {
		fmt.Fprintf(r.w, "; against the unpadded eager step on the real rows and pages: %d bytes", sr.UnpaddedBytes)
	}
	fmt.Fprintln(r.w)
	for _, f := range r.res.Failures[failed:] {
		fmt.Fprintf(r.w, "    %s\n", f)
	}
	return nil
}

// eagerStep runs s eagerly on the Layer at batch dim b: its inputs staged
// for b sequences (padded when b is its bucket), then Forward. It returns
// the snapshot and the kernels launched.
func (r *run) eagerStep(b int, s Step) (Snapshot, int64, error) {
	l, err := r.layer(b)
	if err != nil {
		return nil, 0, err
	}
	if err := r.reset(l); err != nil {
		return nil, 0, err
	}
	copies, err := runtime.Stage(r.lay.StepInputs(), r.lay.Pages, s.Batch, b, s.Host)
	if err != nil {
		return nil, 0, err
	}
	bufs := r.pkg.Buffers(l)
	for _, c := range copies {
		buf := bufs[c.Input]
		if err := errors.Join(buf.CopyInAt(0, c.Data), buf.Memset(int64(len(c.Data)), c.Zero, 0)); err != nil {
			return nil, 0, err
		}
	}
	if err := r.ctx.Synchronize(); err != nil {
		return nil, 0, err
	}
	before := r.eager.Counts()
	if err := l.Forward(r.eager); err != nil {
		return nil, 0, err
	}
	if err := r.eager.Synchronize(); err != nil {
		return nil, 0, err
	}
	launches := r.eager.Counts().Sub(before).Launches()
	snap, err := r.snapshot(l)
	return snap, launches, err
}

// reset poisons l's inputs, states, outputs and arena, fills its params
// and states from InitRandom and waits.
func (r *run) reset(l Layer) error {
	for _, b := range append(r.pkg.Buffers(l), l.Arena()) {
		if err := b.Memset(0, b.Bytes, gpu.Poison); err != nil {
			return err
		}
	}
	if err := l.InitRandom(r.seed); err != nil {
		return err
	}
	return r.ctx.Synchronize()
}

// snapshot downloads l's inputs, states, outputs and arena.
func (r *run) snapshot(l Layer) (Snapshot, error) {
	snap := Snapshot{}
	bufs := append(r.pkg.Buffers(l), l.Arena())
	for i, b := range bufs {
		data := make([]byte, b.Bytes)
		if err := b.CopyOut(data); err != nil {
			return nil, err
		}
		key := ArenaKey
		if i < len(r.lay.Buffers) {
			key = r.lay.Buffers[i].Key()
		}
		snap[key] = data
	}
	return snap, nil
}
