package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/fuser-dev/fuser/ir"
)

// specSummary describes a checked spec.
type specSummary struct {
	Layer   string       `json:"layer"`
	Dims    []string     `json:"dims"`
	Inputs  []tensorDesc `json:"inputs"`
	Params  []tensorDesc `json:"params"`
	States  []tensorDesc `json:"states"`
	Outputs []tensorDesc `json:"outputs"`
	Ops     int          `json:"ops"`
}

type tensorDesc struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

func describe(vs []*ir.Value) []tensorDesc {
	out := []tensorDesc{}
	for _, v := range vs {
		out = append(out, tensorDesc{Name: v.Name, Type: v.Type.String()})
	}
	return out
}

func summarize(g *ir.Graph) specSummary {
	ops := 0
	for _, n := range g.Nodes {
		if !n.Op.IsLeaf() {
			ops++
		}
	}
	return specSummary{Layer: g.Name, Dims: g.Dims, Inputs: describe(g.Inputs), Params: describe(g.Params), States: describe(g.States), Outputs: describe(g.Outputs), Ops: ops}
}

func runCheck(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	pos, err := parseArgs(fs, args, 1, "check SPEC [--json]")
	if err != nil {
		return err
	}
	g, err := loadSpec(pos[0])
	if err != nil {
		return err
	}
	s := summarize(g)
	if *asJSON {
		return writeJSON(w, s)
	}
	fmt.Fprintf(w, "%s: layer %s is well-formed: %d ops over dims %v\n", pos[0], s.Layer, s.Ops, s.Dims)
	for _, group := range []struct {
		kind string
		ts   []tensorDesc
	}{{"input", s.Inputs}, {"param", s.Params}, {"state", s.States}, {"output", s.Outputs}} {
		for _, t := range group.ts {
			fmt.Fprintf(w, "  %-6s %-10s %s\n", group.kind, t.Name, t.Type)
		}
	}
	return nil
}
