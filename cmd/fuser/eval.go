package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
)

const evalUsage = "eval SPEC -dims B=2,S=3,T=17 [-seed N] [--round] [--json]"

// stats summarises a tensor.
type stats struct {
	Name   string  `json:"name"`
	Shape  []int   `json:"shape"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
	RMS    float64 `json:"rms"`
	Finite bool    `json:"finite"`
}

// evalOutput is `fuser eval --json`.
type evalOutput struct {
	Layer   string           `json:"layer"`
	Dims    map[string]int64 `json:"dims"`
	Derived []string         `json:"derived_dims,omitempty"`
	Seed    int64            `json:"seed"`
	Round   bool             `json:"round"`
	Outputs []stats          `json:"outputs"`
	States  []stats          `json:"states"`
}

func runEval(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	dimsArg := fs.String("dims", "", "bind the dims, e.g. B=2,S=3,T=17")
	seed := fs.Int64("seed", 1, "seed of the random inputs")
	round := fs.Bool("round", false, "round every op's result to its declared dtype")
	asJSON := fs.Bool("json", false, "print JSON")
	g, dims, err := specAndDims(fs, args, evalUsage, dimsArg)
	if err != nil {
		return err
	}
	out, err := evaluate(g, dims, *seed, *round)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(w, out)
	}
	printEval(w, out)
	return nil
}

// evaluate runs g on random inputs at dims.
func evaluate(g *ir.Graph, dims map[string]int64, seed int64, round bool) (*evalOutput, error) {
	full, derived, err := interp.DeriveDims(g, dims)
	if err != nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("fuser eval: %w", err)}
	}
	if err := requireDims(full, g); err != nil {
		return nil, err
	}
	inputs, err := interp.RandomInputs(g, full, seed)
	if err != nil {
		return nil, fmt.Errorf("fuser eval: %w", err)
	}
	res, err := interp.Run(g, full, inputs, interp.Options{Round: round})
	if err != nil {
		return nil, fmt.Errorf("fuser eval: %w", err)
	}
	out := &evalOutput{Layer: g.Name, Dims: full, Derived: derived, Seed: seed, Round: round, Outputs: []stats{}, States: []stats{}}
	for _, o := range g.Outputs {
		out.Outputs = append(out.Outputs, summarizeTensor(o.Name, res.Outputs[o.Name]))
	}
	names := make([]string, 0, len(res.States))
	for n := range res.States {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out.States = append(out.States, summarizeTensor(n, res.States[n]))
	}
	return out, nil
}

func summarizeTensor(name string, t *interp.Tensor) stats {
	s := stats{Name: name, Shape: t.Shape, Min: math.Inf(1), Max: math.Inf(-1), Finite: true}
	var sum, sq float64
	for _, x := range t.Data {
		s.Min, s.Max = math.Min(s.Min, x), math.Max(s.Max, x)
		sum += x
		sq += x * x
		if math.IsNaN(x) || math.IsInf(x, 0) {
			s.Finite = false
		}
	}
	if n := float64(len(t.Data)); n > 0 {
		s.Mean, s.RMS = sum/n, math.Sqrt(sq/n)
	}
	return s
}

func printEval(w io.Writer, out *evalOutput) {
	fmt.Fprintf(w, "evaluated layer %s on the CPU reference interpreter (float64", out.Layer)
	if out.Round {
		fmt.Fprint(w, ", rounded to the declared dtypes")
	}
	fmt.Fprintf(w, ") at %s, random inputs seed %d", formatDims(out.Dims), out.Seed)
	if len(out.Derived) > 0 {
		fmt.Fprintf(w, " (derived %v)", out.Derived)
	}
	fmt.Fprintln(w)
	for _, group := range []struct {
		kind string
		ss   []stats
	}{{"output", out.Outputs}, {"state", out.States}} {
		for _, s := range group.ss {
			fmt.Fprintf(w, "  %-6s %-8s %-22s min %+.4f  max %+.4f  mean %+.5f  rms %.4f  finite %v\n", group.kind, s.Name, fmt.Sprint(s.Shape), s.Min, s.Max, s.Mean, s.RMS, s.Finite)
		}
	}
}
