// Command gpukernels compiles, on a machine without a GPU, every kernel the
// on-device suite and the benchmarks load: the one-kernel modules of every
// suite case (gpu.Cases), fused and unfused, of the bench targets (and
// their fused steps' timeline modules, gpu.Plan.Timeline), of the
// determinism test and of the ceiling kernels, with NVRTC for
// sm_90a, into gzipped cubins named by their source's key plus
// manifest.json (see gpu.Images). make gpu-bundle
// runs it; it needs the build tag nvrtc (without it NVRTC is not linked and
// it fails saying so).
//
//	go run -tags nvrtc ./gpu/cmd/gpukernels -out .gpu/kernels [-seed N] [-bench 'llama3_8b:B=1,S=1,T=4096;...'] [-specs DIR] [-suite=false] [-dump DIR]
//
// -specs DIR adds the kernels of the spec files there (the suite's -specs).
// With -suite=false it compiles only the bench targets and the ceiling
// kernels, the quick bundle of a benchmarking round, and keeps the images
// already in -out. -dump DIR writes the sources too, as DIR/KEY.cu.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fuser-dev/fuser/codegen/nvrtc"
	"github.com/fuser-dev/fuser/gpu"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
)

func main() {
	out := flag.String("out", ".gpu/kernels", "directory of the images")
	seed := flag.Int64("seed", gpu.DefaultSeed, "seed of the suite's cases")
	bench := flag.String("bench", "", "bench targets SPEC:DIMS;... (embedded specs at full size, or spec files)")
	splitKeys := flag.String("split-keys", "0", "decode attention split sizes the bench targets are also planned at, comma-separated (0: the launch plan's)")
	jobs := flag.Int("j", runtime.NumCPU(), "parallel compilations")
	specFiles := flag.String("specs", "", "also compile the kernels of the spec files of this directory (gpu.SpecCases; the suite's -specs)")
	suite := flag.Bool("suite", true, "also compile the suite's and the determinism test's kernels")
	dump := flag.String("dump", "", "also write each image's CUDA source there as KEY.cu (for ablations compiled on the device)")
	cases := flag.String("cases", "", "compile only the suite cases whose name matches one of these regexps (the suite's -cases, gpu.SelectCases; the determinism test's kernels are always compiled)")
	flag.Parse()
	var sks []int64
	for _, f := range strings.Split(*splitKeys, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "gpukernels: -split-keys: %q is not a count\n", f)
			os.Exit(2)
		}
		sks = append(sks, n)
	}
	o := options{out: *out, seed: *seed, bench: *bench, specFiles: *specFiles, splitKeys: sks, jobs: *jobs, suite: *suite, dump: *dump, cases: *cases}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "gpukernels:", err)
		os.Exit(1)
	}
}

// options are gpukernels' flags.
type options struct {
	out, bench, specFiles, dump, cases string
	seed                               int64
	splitKeys                          []int64
	jobs                               int
	suite                              bool
}

func run(o options) error {
	out, seed, bench, splitKeys, jobs, suite, dump := o.out, o.seed, o.bench, o.splitKeys, o.jobs, o.suite, o.dump
	major, minor, err := nvrtcVersion()
	if err != nil {
		return err
	}
	var plans []*gpu.Plan
	skipped := 0
	if suite {
		if plans, err = suitePlans(seed, o.specFiles, o.cases); err != nil {
			return err
		}
	}
	targets, err := gpu.ParseBenchTargets(bench)
	if err != nil {
		return err
	}
	for _, t := range targets {
		file, src, err := specs.Read(t.Spec)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		g, err := parse(file, src)
		if err != nil {
			return err
		}
		for i, sk := range splitKeys {
			// The bundle's images are for the H200, whose values the bench
			// reads from the device.
			f, u, err := gpu.BenchPlans(g, t.Dims, sk, plan.H200)
			if err != nil {
				return fmt.Errorf("bench %s: %w", t.Spec, err)
			}
			plans = append(plans, f)
			if i == 0 {
				// the fused step's timeline modules (fuser bench -timeline)
				plans = append(plans, u, f.Timeline())
			}
		}
	}
	ceil, err := gpu.CeilingPlan()
	if err != nil {
		return err
	}
	plans = append(plans, ceil)
	for _, p := range plans {
		for _, k := range p.Kernels {
			if k.Err != nil {
				skipped++
			}
		}
	}
	srcs := gpu.Sources(plans...)
	srcs[gpu.ImageKey(gpu.MMAPeakSource)] = gpu.MMAPeakSource
	srcs[gpu.ImageKey(gpu.HoldSource)] = gpu.HoldSource
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if dump != "" {
		if err := dumpSources(dump, srcs); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(srcs))
	for k := range srcs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	man := gpu.Manifest{Arch: gpu.Arch, Compiler: fmt.Sprintf("NVRTC %d.%d", major, minor), Images: map[string][]nvrtc.KernelInfo{}}
	old := previous(out)
	var mu sync.Mutex
	var firstErr error
	work := make(chan string)
	var wg sync.WaitGroup
	start := time.Now()
	compiled := 0
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for key := range work {
				path := filepath.Join(out, key+".cubin.gz")
				if _, err := os.Stat(path); err == nil {
					if info, ok := old[key]; ok {
						mu.Lock()
						man.Images[key] = info
						mu.Unlock()
						continue
					}
				}
				r, err := nvrtc.Compile(srcs[key], key+".cu", gpu.Arch)
				if err == nil {
					err = gpu.WriteImage(path, r.CUBIN)
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("image %s: %w", key, err)
				}
				if err == nil {
					man.Images[key] = r.Kernels
					compiled++
				}
				mu.Unlock()
			}
		}()
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	// Drop images of sources no longer generated; a bench-only run keeps
	// the suite's and lists them in the manifest still.
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if key, ok := cutSuffix(e.Name(), ".cubin.gz"); ok {
			if _, live := srcs[key]; live {
				continue
			}
			if info, kept := old[key]; kept && !suite {
				man.Images[key] = info
				continue
			}
			os.Remove(filepath.Join(out, e.Name()))
		}
	}
	if err := writeJSON(filepath.Join(out, gpu.ManifestFile), man); err != nil {
		return err
	}
	fmt.Printf("gpukernels: %d plans, %d images (%d compiled now, NVRTC %d.%d, %s) in %s; %d kernels codegen/cuda cannot generate yet\n",
		len(plans), len(srcs), compiled, major, minor, gpu.Arch, time.Since(start).Round(time.Second), skipped)
	return nil
}

// suitePlans are the plans of the on-device suite's cases (fused and
// unfused; with the spec files of specFiles, gpu.SpecCases) and of the
// determinism test (TestDeterministicDecode).
func suitePlans(seed int64, specFiles, match string) ([]*gpu.Plan, error) {
	var plans []*gpu.Plan
	cases := gpu.Cases(seed)
	if specFiles != "" {
		files, err := gpu.SpecCases(specFiles, seed)
		if err != nil {
			return nil, err
		}
		cases = append(cases, files...)
	}
	cases, err := gpu.SelectCases(cases, match)
	if err != nil {
		return nil, err
	}
	for _, c := range cases {
		g, err := c.Graph()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name(), err)
		}
		for _, fused := range []bool{true, false} {
			p, err := gpu.NewPlan(g, c.Dims, fused)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name(), err)
			}
			plans = append(plans, p)
		}
	}
	// The determinism test's plans (TestDeterministicDecode).
	for _, c := range gpu.DeterminismCases {
		for _, sk := range []int64{gpu.DeterministicSplitKeys, 0} {
			big, one, _, _, err := gpu.DeterminismPlans(c, sk)
			if err != nil {
				return nil, fmt.Errorf("determinism %s: %w", c.Variant, err)
			}
			plans = append(plans, big, one)
		}
	}
	return plans, nil
}

// dumpSources writes each source as DIR/KEY.cu: an ablation edits one,
// compiles it on the device and puts the image under the same key.
func dumpSources(dir string, srcs map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for key, src := range srcs {
		if err := os.WriteFile(filepath.Join(dir, key+".cu"), []byte(src), 0o644); err != nil {
			return err
		}
	}
	return nil
}
