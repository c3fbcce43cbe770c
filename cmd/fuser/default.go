package main

import (
	"fmt"
	"io"

	"github.com/fuser-dev/fuser/specs"
	"github.com/fuser-dev/fuser/traffic"
)

// runDefault is `fuser` with no arguments: check the embedded Llama-3-8B
// layer, evaluate it on the CPU at a small batch, and plan a decode step.
func runDefault(w io.Writer) error {
	name := specs.Default
	g, err := loadSpec(name)
	if err != nil {
		return err
	}
	s := summarize(g)
	fmt.Fprintf(w, "1. checked the embedded spec %s: layer %s, %d ops, dims %v, %d params\n\n", name, s.Layer, s.Ops, s.Dims, len(s.Params))
	fmt.Fprint(w, "2. ")
	out, err := evaluate(g, map[string]int64{"B": 1, "S": 2, "T": 5}, 1, false)
	if err != nil {
		return err
	}
	printEval(w, out)
	decode := map[string]int64{"B": 1, "S": 1, "T": 4096}
	r, err := traffic.Compare(g, decode)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n3. planned a decode step at %s, fused against unfused:\n\n%s", formatDims(decode), r.Table())
	fmt.Fprintln(w, "\nnext: fuser help; fuser plan llama3_8b -dims B=1,S=512,T=0 --traffic --explain")
	return nil
}
