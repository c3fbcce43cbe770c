//go:build cuda

package layerstep

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/fuser-dev/fuser/gpu"
	"github.com/fuser-dev/fuser/runtime"
)

// Layer is what Measure needs of a generated package's Layer.
type Layer interface {
	InitRandom(seed uint64) error
	Synchronize() error
	Forward(s *runtime.Stream) error
	Capture(batch int) (*runtime.GraphExec, error)
	Close() error
}

// Target is one generated package: its spec, the dims it was built for
// (its Planned), an instance's bytes (InstanceBytes of its plan.json) and
// its constructor.
type Target struct {
	Spec  string
	Dims  map[string]int64
	Bytes int64
	New   func(ctx *runtime.Context) (Layer, error)
}

// Measure times t's step on b's device: eagerly (Forward) and as its graph
// (Capture at the built batch, dim B) replayed, over gpu.Rotation
// instances, each initialised from its own seed.
func Measure(b *gpu.Bench, t Target, seed uint64) (r Result, err error) {
	rot := gpu.Rotation(t.Bytes, b.L2)
	r = Result{Spec: t.Spec, Dims: t.Dims, Rotation: rot}
	layers := make([]Layer, 0, rot)
	defer func() {
		for _, l := range layers {
			err = errors.Join(err, l.Close())
		}
	}()
	for i := range rot {
		l, err := t.New(b.D.Ctx)
		if err != nil {
			return r, err
		}
		layers = append(layers, l)
		if err := errors.Join(l.InitRandom(seed+uint64(i)), l.Synchronize()); err != nil {
			return r, err
		}
	}
	if r.EagerUs, _, err = b.Time(func(rep int) error { return layers[rep%rot].Forward(b.D.Stream) }); err != nil {
		return r, fmt.Errorf("eager step: %w", err)
	}
	graphs := make([]*runtime.GraphExec, rot)
	for i, l := range layers {
		if graphs[i], err = l.Capture(int(t.Dims["B"])); err != nil {
			return r, err
		}
	}
	if r.GraphUs, _, err = b.Time(func(rep int) error { return graphs[rep%rot].Launch(b.D.Stream) }); err != nil {
		return r, fmt.Errorf("graph replay: %w", err)
	}
	return r, nil
}

// Main is the generated program's main: it times every target and exits
// non-zero on an error or, with -against, on a graph step off fuser
// bench's by more than -tolerance.
func Main(targets []Target) {
	if err := run(targets, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "layerstep:", err)
		os.Exit(1)
	}
}

func run(targets []Target, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("layerstep", flag.ContinueOnError)
	kernels := fs.String("kernels", "", "directory of compiled kernel images, for the hold kernel (default $FUSER_KERNELS, else kernels/ beside this binary)")
	reps := fs.Int("reps", 100, "timed steps per measurement (the median is reported)")
	warmup := fs.Int("warmup", 10, "steps before timing")
	seed := fs.Uint64("seed", 1, "seed of the first instance's random inputs and weights")
	jsonOut := fs.String("json-out", "", "write the results as JSON to this file")
	against := fs.String("against", "", "fuser bench -json-out file to compare the graph steps with")
	tol := fs.Float64("tolerance", 0.1, "with -against, the largest relative difference of a graph step")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var bench []byte
	if *against != "" {
		var err error
		if bench, err = os.ReadFile(*against); err != nil {
			return err
		}
	}
	dev, err := gpu.NewDevice(&gpu.Images{Dir: gpu.KernelsDir(*kernels)})
	if err != nil {
		return err
	}
	defer dev.Close()
	info, err := dev.Ctx.Info()
	if err != nil {
		return err
	}
	b := &gpu.Bench{D: dev, L2: info.L2Bytes, Opt: gpu.BenchOptions{Warmup: *warmup, Reps: *reps}}
	fmt.Fprintf(w, "%s, %d SMs: each step through its generated package (median of %d)\n", info.Name, info.SMs, *reps)
	var results []Result
	var off []error
	for _, t := range targets {
		r, err := Measure(b, t, *seed)
		if err != nil {
			return fmt.Errorf("%s at %v: %w", t.Spec, t.Dims, err)
		}
		line := fmt.Sprintf("  %s %v: eager %.1f µs, graph replay %.1f µs (%d instances)", r.Spec, r.Dims, r.EagerUs, r.GraphUs, r.Rotation)
		if bench != nil {
			if err := Against(&r, bench); err != nil {
				return err
			}
			line += fmt.Sprintf("; fuser bench %.1f µs, ratio %.3f", r.BenchGraphUs, r.Ratio)
			if !(math.Abs(r.Ratio-1) <= *tol) {
				off = append(off, fmt.Errorf("%s at %v: graph step %.1f µs against fuser bench's %.1f µs, off by more than %g", r.Spec, r.Dims, r.GraphUs, r.BenchGraphUs, *tol))
			}
		}
		fmt.Fprintln(w, line)
		results = append(results, r)
	}
	if *jsonOut != "" {
		data, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return errors.Join(off...)
}
