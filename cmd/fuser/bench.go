//go:build cuda

package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/fuser-dev/fuser/gpu"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/runtime"
)

func init() {
	registered = append(registered, command{"bench", benchUsage, benchDoc, runBench})
}

// dimsList is a repeatable -dims flag.
type dimsList []string

func (d *dimsList) String() string     { return strings.Join(*d, " ") }
func (d *dimsList) Set(s string) error { *d = append(*d, s); return nil }

// benchOutput is `fuser bench --json`; bench/compare.py reads it (the
// llama_decode and decode_attention tables are in its terms).
type benchOutput struct {
	Tool     string             `json:"tool"`
	Command  string             `json:"command"`
	Device   runtime.DeviceInfo `json:"device"`
	Images   string             `json:"images"`
	Warmup   int                `json:"warmup"`
	Reps     int                `json:"reps"`
	Ceilings gpu.Ceilings       `json:"ceilings"`
	Targets  []benchTarget      `json:"targets"`
	// LlamaDecode is keyed B<b>_T<t> (llama3_8b, S=1): fused/unfused ×
	// eager/graph step times in µs, where the step could run.
	LlamaDecode map[string]map[string]any `json:"llama_decode,omitempty"`
	// DecodeAttention is keyed B<b>_L<t>: the fused plan's attention kernel.
	DecodeAttention map[string]map[string]any `json:"decode_attention,omitempty"`
	// PrefillAttention is keyed B<b>_N<s> (bench/specs/decode_attention.fu
	// with no cache, T=0): the fused plan's attention kernel.
	PrefillAttention map[string]map[string]any `json:"prefill_attention,omitempty"`
}

func runBench(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var dimsArgs dimsList
	fs.Var(&dimsArgs, "dims", "bind the dims, e.g. B=1,S=1,T=4096 (repeat for several)")
	kernels := fs.String("kernels", "", "directory of compiled kernel images (default $FUSER_KERNELS, else kernels/ beside this binary)")
	nvcc := fs.Bool("nvcc", true, "compile images missing from -kernels with the nvcc of this machine, when there is one")
	reps := fs.Int("reps", 100, "timed launches per measurement (the median is reported)")
	warmup := fs.Int("warmup", 10, "launches before timing")
	seed := fs.Int64("seed", 1, "seed of the random inputs")
	asJSON := fs.Bool("json", false, "print JSON")
	withUnfused := fs.Bool("unfused", true, "also measure the unfused plan")
	splitKeys := fs.Int64("split-keys", 0, "fix decode attention's split size in keys (deterministic mode; 0: the launch plan's split)")
	dependent := fs.Bool("dependent", true, "launch kernels as programmatic dependents where the device allows it (false: each kernel starts when the one before it ends, the ablation)")
	jsonOut := fs.String("json-out", "", "also write the JSON to this file (the table still goes to stdout)")
	timeline := fs.Bool("timeline", false, "also replay the fused step with the timeline probes and print when each kernel's blocks enter, pass their wait and return")
	pos, err := parseArgs(fs, args, 1, benchUsage)
	if err != nil {
		return err
	}
	if len(dimsArgs) == 0 {
		return &exitError{code: 2, err: fmt.Errorf("usage: fuser %s", benchUsage)}
	}
	g, err := loadSpec(pos[0])
	if err != nil {
		return err
	}
	var dimsSets []map[string]int64
	for _, s := range dimsArgs {
		dims, _, err := benchDims(s, g)
		if err != nil {
			return err
		}
		dimsSets = append(dimsSets, dims)
	}
	images := &gpu.Images{Dir: gpu.KernelsDir(*kernels), Log: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }}
	if *nvcc {
		images.NVCC = gpu.FindNVCC()
	}
	dev, err := gpu.NewDevice(images)
	if err != nil {
		return err
	}
	defer dev.Close()
	info, err := dev.Ctx.Info()
	if err != nil {
		return err
	}
	target, err := gpu.DeviceTarget(info)
	if err != nil {
		return err
	}
	target.DependentLaunch = target.DependentLaunch && *dependent
	b := &gpu.Bench{D: dev, L2: info.L2Bytes, Opt: gpu.BenchOptions{Warmup: *warmup, Reps: *reps, Seed: *seed}}
	clock := newPhases(time.Now)
	if err := b.MeasureCeilings(info); err != nil {
		return err
	}
	clock.mark("ceilings")
	fmt.Fprintf(os.Stderr, "fuser bench: %s\n", clock)
	out := benchOutput{Tool: "fuser bench", Command: "fuser " + strings.Join(append([]string{"bench"}, args...), " "),
		Device: info, Images: images.Dir + " (" + images.Manifest().Compiler + ")", Warmup: *warmup, Reps: *reps, Ceilings: b.Ceil}
	out.Ceilings.Round()
	// The table goes out plan by plan and the JSON file is rewritten after
	// every dims, so that a run cut short (a device call's time limit)
	// keeps what it measured.
	if !*asJSON {
		printBenchHeader(w, out)
	}
	for _, dims := range dimsSets {
		clock = newPhases(time.Now)
		fused, unfused, err := gpu.BenchPlans(g, dims, *splitKeys, target)
		if err != nil {
			return err
		}
		clock.mark("plans")
		t := benchTarget{Spec: g.Name, Dims: fused.Dims, SplitKeys: *splitKeys}
		plans := []struct {
			p   *gpu.Plan
			dst *gpu.PlanBench
		}{{fused, &t.Fused}, {unfused, &t.Unfused}}
		if !*withUnfused {
			plans = plans[:1]
		}
		leaves, err := b.Inputs(fused)
		if err != nil {
			return err
		}
		clock.mark("inputs")
		for _, pp := range plans {
			l, err := dev.Load(pp.p)
			if err != nil {
				return err
			}
			leaves.P = pp.p
			if *pp.dst, err = b.Plan(l, leaves); err != nil {
				return fmt.Errorf("%s %s: %w", gpu.PlanName(pp.p.Fused), gpu.DimsString(dims), err)
			}
			pp.dst.Round()
			clock.mark(gpu.PlanName(pp.p.Fused))
			if !*asJSON {
				printPlanBench(w, t, *pp.dst)
			}
		}
		if *timeline {
			leaves.P = fused
			if t.Timeline, err = b.Timeline(fused, leaves); err != nil {
				return fmt.Errorf("timeline %s: %w", gpu.DimsString(dims), err)
			}
			clock.mark("timeline")
			if !*asJSON {
				printTimeline(w, *reps, t.Timeline)
			}
		}
		fmt.Fprintf(os.Stderr, "fuser bench %s: %s\n", gpu.DimsString(dims), clock)
		t.KVBytes = kvBytes(fused)
		out.Targets = append(out.Targets, t)
		out.addCompareRows(t)
		if *jsonOut != "" {
			if err := writeJSONFile(*jsonOut, out); err != nil {
				return err
			}
		}
	}
	if *asJSON {
		return writeJSON(w, out)
	}
	return nil
}

// kvBytes is the K and V bytes of the fused plan's attention node at its
// dims: every (K, V) source once (a cascade's shared prefix, batch 1, once).
func kvBytes(p *gpu.Plan) int64 {
	for _, k := range p.Plan.Kernels {
		for _, n := range k.Nodes {
			if n.Op != ir.OpAttention {
				continue
			}
			var sum int64
			for _, v := range n.AttentionKV() {
				e, err := v.Type.Shape.NumElements().Eval(p.Dims)
				if err != nil {
					return 0
				}
				sum += e * v.Type.DType.Size()
			}
			return sum
		}
	}
	return 0
}

// compareKey names a decode attention row of bench/compare.py:
// B<b>_L<keys>, prefixed "paged " for a paged cache and "cascade " for a
// shared prefix (L<prefix>+<own>), suffixed " sk=<n>" for -split-keys.
func compareKey(t benchTarget) (string, bool) {
	d := t.Dims
	if d["S"] != 1 {
		return "", false
	}
	var key string
	switch {
	case t.Spec == "llama3_8b":
		key = fmt.Sprintf("B%d_L%d", d["B"], d["T"])
	case strings.HasPrefix(t.Spec, "decode_cascade"):
		key = fmt.Sprintf("cascade B%d_L%d+%d", d["B"], d["L"], d["T"]+1)
	case strings.HasPrefix(t.Spec, "decode_attention_paged"):
		key = fmt.Sprintf("paged B%d_L%d", d["B"], d["T"]+1)
	case strings.HasPrefix(t.Spec, "decode_attention"):
		key = fmt.Sprintf("B%d_L%d", d["B"], d["T"]+1)
	default:
		return "", false
	}
	if t.SplitKeys > 0 {
		key += fmt.Sprintf(" sk=%d", t.SplitKeys)
	}
	return key, true
}

// addCompareRows fills the tables bench/compare.py reads.
func (o *benchOutput) addCompareRows(t benchTarget) {
	if o.LlamaDecode == nil {
		o.LlamaDecode, o.DecodeAttention = map[string]map[string]any{}, map[string]map[string]any{}
	}
	if t.Spec == "llama3_8b" && t.Dims["S"] == 1 {
		key := fmt.Sprintf("B%d_T%d", t.Dims["B"], t.Dims["T"])
		row := map[string]any{}
		for _, pb := range []gpu.PlanBench{t.Fused, t.Unfused} {
			if pb.Plan == "" {
				continue
			}
			if pb.Step.Skipped != "" {
				row[pb.Plan+"_skipped"] = pb.Step.Skipped
				row[pb.Plan+"_kernels_sum_us_partial"] = pb.Step.KernelsSumUs
				continue
			}
			row[pb.Plan+"_eager_us"] = pb.Step.EagerUs
			row[pb.Plan+"_graph_us"] = pb.Step.GraphUs
		}
		o.LlamaDecode[key] = row
	}
	rows := o.DecodeAttention
	akey, ok := compareKey(t)
	if !ok {
		if akey, ok = prefillKey(t); !ok {
			return
		}
		if o.PrefillAttention == nil {
			o.PrefillAttention = map[string]map[string]any{}
		}
		rows = o.PrefillAttention
	}
	for _, k := range t.Fused.Kernels {
		if k.Strategy != "attention" {
			continue
		}
		if k.Skipped != "" {
			rows[akey] = map[string]any{"skipped": k.Skipped}
			continue
		}
		row := map[string]any{"us": k.MedianUs, "min_us": k.MinUs, "model_TBps": k.TBps, "grid": k.Grid, "launches": k.Launches}
		if t.KVBytes > 0 && k.MedianUs > 0 {
			row["kv_bytes"] = t.KVBytes
			row["TBps"] = round3(float64(t.KVBytes) / k.MedianUs / 1e6)
		}
		rows[akey] = row
	}
}

// prefillKey names a prefill attention row of bench/compare.py, B<b>_N<s>:
// the contiguous decode_attention spec with no cache (T=0) and S > 1.
func prefillKey(t benchTarget) (string, bool) {
	d := t.Dims
	if t.Spec != "decode_attention" || d["T"] != 0 || d["S"] <= 1 {
		return "", false
	}
	return fmt.Sprintf("B%d_N%d", d["B"], d["S"]), true
}

func round3(x float64) float64 {
	if x == 0 {
		return 0
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

// printBenchHeader prints the device and the ceilings measured on it.
func printBenchHeader(w io.Writer, o benchOutput) {
	c := o.Ceilings
	fmt.Fprintf(w, "%s, %d SMs, %d MB L2\n", o.Device.Name, o.Device.SMs, o.Device.L2Bytes>>20)
	fmt.Fprintf(w, "ceilings: copy %.3g TB/s; GEMM %.4g TFLOP/s (%s); mma.sync loop %.4g, generated GEMM %.4g TFLOP/s %s\n",
		c.CopyTBps, c.GemmTFLOPs, c.GemmSource, c.MMASyncTFLOPs, c.GeneratedGemmTFLOPs, c.GeneratedGemmNote)
}
