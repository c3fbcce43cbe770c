package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fuser-dev/fuser/codegen/cuda"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/traffic"
)

const planUsage = "plan SPEC [-dims B=1,S=1,T=4096] [--unfused] [--traffic] [--explain] [--dump-after=PASS] [-split-keys N] [-target h200] [--json]"

// planOutput is `fuser plan --json`.
type planOutput struct {
	Plan    plan.Desc          `json:"plan"`
	Explain []string           `json:"explain,omitempty"`
	Dumps   map[string]string  `json:"dumps,omitempty"`
	Traffic *traffic.Report    `json:"traffic,omitempty"`
	Dims    map[string]int64   `json:"dims,omitempty"`
	Passes  []string           `json:"passes"`
	Ratios  map[string]float64 `json:"ratios,omitempty"`
}

func runPlan(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	dimsArg := fs.String("dims", "", "bind the dims, e.g. B=1,S=1,T=4096 (needed for launch, arena and traffic)")
	unfused := fs.Bool("unfused", false, "show the unfused plan (one op per kernel)")
	trafficArg := fs.Bool("traffic", false, "per-kernel HBM bytes, FLOPs and launches of both plans, their ratio and the floor")
	explain := fs.Bool("explain", false, "print why each candidate fusion fired or did not")
	dumpAfter := fs.String("dump-after", "", "print the graph and plan after the named pass (or 'all')")
	asJSON := fs.Bool("json", false, "print JSON")
	splitKeys := fs.Int64("split-keys", 0, "fix decode attention's split size in keys (deterministic mode; needs -dims)")
	targetName := targetFlag(fs)
	g, dims, err := specAndDims(fs, args, planUsage, dimsArg)
	if err != nil {
		return err
	}
	target, err := parseTarget("plan", *targetName)
	if err != nil {
		return err
	}
	if *splitKeys < 0 || (*splitKeys > 0 && *dimsArg == "") {
		return &exitError{code: 2, err: fmt.Errorf("fuser plan: -split-keys needs -dims and a positive count, got %d", *splitKeys)}
	}
	opt := passes.Options{Target: target, DecodeSplitKeys: *splitKeys, Check: cuda.Emittable, GemmWGMMA: cuda.GemmWGMMA, GemvTiles: cuda.GemvTiles, GemvCols: cuda.GemvCols}
	if *dimsArg != "" || *trafficArg {
		if err := requireDims(dims, g); err != nil {
			return err
		}
		opt.Dims = dims
	}
	pipeline := passes.Fused
	if *unfused {
		pipeline = passes.Unfused
	}
	if *dumpAfter != "" && *dumpAfter != "all" && !hasPass(pipeline, *dumpAfter) {
		return &exitError{code: 2, err: fmt.Errorf("fuser plan: no pass %q (passes: %s)", *dumpAfter, strings.Join(passNames(pipeline), ", "))}
	}
	dumps := map[string]string{}
	var order []string
	opt.After = func(name string, s *passes.State) {
		if *dumpAfter != name && *dumpAfter != "all" {
			return
		}
		text := s.Graph.String()
		if s.Plan != nil && name != "epilogue" && name != "rows" {
			text += s.Plan.String()
		}
		dumps[name] = text
		order = append(order, name)
	}
	st, err := passes.Run(g, pipeline, opt)
	if err != nil {
		return err
	}
	out := planOutput{Plan: st.Plan.Describe(), Dims: opt.Dims, Passes: passNames(pipeline)}
	if *explain {
		for _, d := range st.Log {
			out.Explain = append(out.Explain, d.String())
		}
	}
	if *dumpAfter != "" {
		out.Dumps = dumps
	}
	if *trafficArg {
		if out.Traffic, err = traffic.Compare(g, dims); err != nil {
			return err
		}
		out.Ratios = map[string]float64{"unfused_over_fused_bytes": out.Traffic.Ratio(), "fused_over_floor": out.Traffic.OverFloor()}
	}
	if *asJSON {
		return writeJSON(w, out)
	}
	for _, name := range order {
		fmt.Fprintf(w, "=== after %s\n%s\n", name, dumps[name])
	}
	if *dumpAfter == "" {
		fmt.Fprint(w, st.Plan.String())
	}
	if *explain {
		fmt.Fprintf(w, "\nfusion decisions:\n%s\n", strings.Join(out.Explain, "\n"))
	}
	if out.Traffic != nil {
		fmt.Fprintf(w, "\n%s", out.Traffic.Table())
	}
	return nil
}

func hasPass(ps []passes.Pass, name string) bool {
	return contains(passNames(ps), name)
}

func passNames(ps []passes.Pass) []string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names
}
