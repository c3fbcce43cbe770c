package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/fuser-dev/fuser/plan"
)

// parseArgs parses flags placed before or after the positional arguments
// (fuser plan SPEC --traffic and fuser plan --traffic SPEC both work) and
// checks the number of positionals.
func parseArgs(fs *flag.FlagSet, args []string, positionals int, usage string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, &exitError{code: 2, err: fmt.Errorf("fuser %s: %w\nusage: fuser %s", fs.Name(), err, usage)}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) != positionals {
		return nil, &exitError{code: 2, err: fmt.Errorf("usage: fuser %s", usage)}
	}
	return pos, nil
}

// writeJSON prints v indented.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// targetFlag declares -target on fs: the GPU the plan is sized for.
func targetFlag(fs *flag.FlagSet) *string {
	return fs.String("target", plan.H200.Name, "the GPU the plan is sized for: h200, h100, a100, or an architecture (sm_90a: h200, sm_80: a100)")
}

// parseTarget looks the -target value up (exit status 2 when unknown).
func parseTarget(cmd, name string) (plan.Target, error) {
	t, err := plan.LookupTarget(name)
	if err != nil {
		return t, &exitError{code: 2, err: fmt.Errorf("fuser %s: %w", cmd, err)}
	}
	return t, nil
}
