//go:build cuda

// Command refdump is the device's side of the external-reference check
// (issue #19, item 2): for every case of gpu.RefCases (each shipped spec,
// shrunk, at decode and prefill; Llama-3-8B at full size; decode attention
// over ragged and paged caches; the every-op layers), it draws the inputs
// as the suite does, runs the fused and the unfused plan on the GPU, and
// writes under -out, per case, the layer's exported PyTorch program
// (layer.py), its inputs (inputs.safetensors) and each plan's outputs and
// states after the step (fused.safetensors, unfused.safetensors), with
// cases.json listing them. bench/refcheck.py reads that directory;
// .gpu/refcheck.sh runs both.
//
//	refdump -out DIR [-cases 'REGEXP ...'] [-seed N] [-kernels DIR] [-mutate KERNEL_REGEXP=SCALE]
//
// -mutate makes a mutation run (gpu.Mutation): what the matching kernels
// write is scaled after each launch, and refcheck.py must then fail.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/fuser-dev/fuser/gpu"
)

func main() {
	out := flag.String("out", "", "directory to write the cases to")
	cases := flag.String("cases", "", "only the cases whose name (spec/size/dims) matches one of these regexps (separated by spaces; each must match a case, gpu.SelectCases)")
	seed := flag.Int64("seed", gpu.DefaultSeed, "seed the suite's cases are drawn from (the bundle has the kernels of the default's)")
	kernels := flag.String("kernels", "", "directory of compiled kernel images (default $FUSER_KERNELS, else kernels/ beside this binary)")
	mutate := flag.String("mutate", "", "a mutation run: KERNEL_REGEXP=SCALE scales what the matching kernels write")
	flag.Parse()
	m, err := gpu.ParseMutation(*mutate)
	if *out == "" || err != nil || flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "usage: refdump -out DIR [-cases 'REGEXP ...'] [-seed N] [-kernels DIR] [-mutate KERNEL_REGEXP=SCALE] (%v)\n", err)
		os.Exit(2)
	}
	if err := run(*out, *cases, *seed, *kernels, m); err != nil {
		log.Fatalf("refdump: %v", err)
	}
}

func run(out, cases string, seed int64, kernels string, mutation *gpu.Mutation) error {
	all := gpu.RefCases(seed)
	picked, err := gpu.SelectCases(all, cases)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, c := range picked {
		keep[c.Name()] = true
	}
	images := &gpu.Images{Dir: gpu.KernelsDir(kernels), NVCC: gpu.FindNVCC(), Log: log.Printf}
	dev, err := gpu.NewDevice(images)
	if err != nil {
		return err
	}
	defer dev.Close()
	dev.Mutation = mutation
	m := &gpu.RefManifest{Seed: seed}
	// The cases keep their place in RefCases, which names their directories.
	for i, c := range all {
		if !keep[c.Name()] {
			continue
		}
		start := time.Now()
		rc, err := gpu.PrepareRefCase(out, gpu.RefSubdir(i, c), c)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name(), err)
		}
		for _, fused := range []bool{true, false} {
			name := gpu.PlanName(fused)
			p, err := gpu.NewPlan(rc.Graph, rc.Dims, fused)
			if err != nil {
				return fmt.Errorf("%s %s: %w", c.Name(), name, err)
			}
			var got map[string][]byte
			vs, err := rc.PlanResults(p)
			if err == nil {
				got, err = dev.Step(p, rc.Inputs, vs)
			}
			if err == nil {
				err = rc.WritePlanResults(name, got)
			}
			if err != nil {
				log.Printf("%s %s: %v", c.Name(), name, err)
				rc.Entry.Plans[name] = gpu.RefPlan{Skip: err.Error()}
			}
		}
		m.Cases = append(m.Cases, rc.Entry)
		log.Printf("%s (%s): written in %.1f s", c.Name(), c.What, time.Since(start).Seconds())
		if err := gpu.WriteRefManifest(out, m); err != nil {
			return err
		}
	}
	if len(m.Cases) == 0 {
		return fmt.Errorf("no reference case")
	}
	return nil
}
