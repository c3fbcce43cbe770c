//go:build cuda

package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/fuser-dev/fuser/gpu"
	"github.com/fuser-dev/fuser/interp"
)

func init() {
	registered = append(registered, command{"profile", profileUsage, profileDoc, runProfile})
}

// profileOutput is `fuser profile`'s JSON; bench/ncu_table.py joins it with
// the counters ncu measured for the same launches.
type profileOutput struct {
	Spec    string               `json:"spec"`
	Dims    map[string]int64     `json:"dims"`
	Kernels []gpu.ProfiledKernel `json:"kernels"`
}

func runProfile(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	dimsArg := fs.String("dims", "", "bind the dims, e.g. B=1,S=1,T=4096")
	kernels := fs.String("kernels", "", "directory of compiled kernel images (default $FUSER_KERNELS, else kernels/ beside this binary)")
	seed := fs.Int64("seed", 1, "seed of the random inputs")
	jsonOut := fs.String("json-out", "", "write the JSON to this file instead of stdout")
	g, dims, err := specAndDims(fs, args, profileUsage, dimsArg)
	if err != nil {
		return err
	}
	full, _, err := interp.DeriveDims(g, dims)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("fuser profile: %w", err)}
	}
	if err := requireDims(full, g); err != nil {
		return err
	}
	images := &gpu.Images{Dir: gpu.KernelsDir(*kernels), Log: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }}
	dev, err := gpu.NewDevice(images)
	if err != nil {
		return err
	}
	defer dev.Close()
	target, err := dev.Target()
	if err != nil {
		return err
	}
	fused, unfused, err := gpu.BenchPlans(g, dims, 0, target)
	if err != nil {
		return err
	}
	b := &gpu.Bench{D: dev, Opt: gpu.BenchOptions{Seed: *seed}}
	leaves, err := b.Inputs(fused)
	if err != nil {
		return err
	}
	out := profileOutput{Spec: g.Name, Dims: fused.Dims}
	for _, p := range []*gpu.Plan{fused, unfused} {
		l, err := dev.Load(p)
		if err != nil {
			return err
		}
		leaves.P = p
		ks, err := b.Once(l, leaves)
		if err != nil {
			return fmt.Errorf("%s plan: %w", gpu.PlanName(p.Fused), err)
		}
		out.Kernels = append(out.Kernels, ks...)
	}
	if *jsonOut == "" {
		return writeJSON(w, out)
	}
	return writeJSONFile(*jsonOut, out)
}

// writeJSONFile writes v, indented, to the file at path (replacing it).
func writeJSONFile(path string, v any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeJSON(f, v); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
