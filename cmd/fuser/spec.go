package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/fuser-dev/fuser/diag"
	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/specs"
)

// loadSpec reads SPEC (a file, or an embedded spec's name) and builds it.
// Spec errors come back rendered with carets, as exit status 2.
func loadSpec(arg string) (*ir.Graph, error) {
	g, _, _, err := loadSpecSource(arg)
	return g, err
}

// loadSpecSource is loadSpec that also returns the spec's file name and
// text.
func loadSpecSource(arg string) (g *ir.Graph, filename, src string, err error) {
	filename, src, ok := specs.Source(strings.TrimSuffix(arg, ".fu"))
	if _, err := os.Stat(arg); err == nil || !ok {
		b, err := os.ReadFile(arg)
		if err != nil {
			return nil, "", "", &exitError{code: 2, err: fmt.Errorf("fuser: %w (and no embedded spec is named %q; see fuser help)", err, arg)}
		}
		filename, src = arg, string(b)
	}
	if g, err = frontend.Parse(filename, src); err != nil {
		return nil, "", "", specErrors(err, src)
	}
	return g, filename, src, nil
}

// specErrors renders a spec's errors with carets, as exit status 2.
func specErrors(err error, src string) error {
	var list diag.List
	if l, ok := err.(diag.List); ok {
		list = l
	} else {
		list = diag.List{{Msg: err.Error()}}
	}
	return &exitError{code: 2, err: fmt.Errorf("%s%d error(s)", list.Render(src), len(list))}
}

// specAndDims parses a command's flags and its one SPEC argument, loads
// the spec and reads the dims flag's value against it.
func specAndDims(fs *flag.FlagSet, args []string, usage string, dimsArg *string) (*ir.Graph, map[string]int64, error) {
	pos, err := parseArgs(fs, args, 1, usage)
	if err != nil {
		return nil, nil, err
	}
	g, err := loadSpec(pos[0])
	if err != nil {
		return nil, nil, err
	}
	dims, err := parseDims(*dimsArg, g)
	if err != nil {
		return nil, nil, err
	}
	return g, dims, nil
}

// parseDims reads B=2,S=3,T=17 (see ir.ParseDims) and checks it against
// the graph: its dims only, and bindings its tensors can take (see
// ir.Graph.CheckDims).
func parseDims(s string, g *ir.Graph) (map[string]int64, error) {
	if s == "" {
		return map[string]int64{}, nil
	}
	dims, err := ir.ParseDims(s)
	if err != nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("fuser: -dims: %w", err)}
	}
	for _, name := range sortedNames(dims) {
		if !contains(g.Dims, name) {
			return nil, &exitError{code: 2, err: fmt.Errorf("fuser: -dims: the spec has no dim %s (it has %s)", name, strings.Join(g.Dims, ", "))}
		}
	}
	if err := g.CheckDims(dims); err != nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("fuser: -dims %s: %w", s, err)}
	}
	return dims, nil
}

// requireDims checks that every dim of the graph is bound.
func requireDims(dims map[string]int64, g *ir.Graph) error {
	var missing []string
	for _, d := range g.Dims {
		if _, ok := dims[d]; !ok {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return &exitError{code: 2, err: fmt.Errorf("fuser: -dims must bind %s", strings.Join(missing, ", "))}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sortedNames returns the bound dims' names, sorted.
func sortedNames(dims map[string]int64) []string {
	names := make([]string, 0, len(dims))
	for n := range dims {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// formatDims prints dims as B=1 S=2 T=5, sorted by name.
func formatDims(dims map[string]int64) string {
	names := sortedNames(dims)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%d", n, dims[n])
	}
	return strings.Join(parts, " ")
}
