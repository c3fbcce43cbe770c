package ir

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ParseDims reads a list of dim bindings, B=2,S=3,T=17: each a name and a
// non-negative integer, no name twice. CheckDims checks them against a
// graph.
func ParseDims(s string) (map[string]int64, error) {
	dims := map[string]int64{}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.ParseInt(val, 10, 64)
		switch {
		case !ok || name == "" || err != nil:
			return nil, fmt.Errorf("%q is not NAME=COUNT", part)
		case n < 0:
			return nil, fmt.Errorf("%s=%d is negative: a dim counts something", name, n)
		}
		if old, twice := dims[name]; twice {
			return nil, fmt.Errorf("%s is bound twice (%s=%d and %s=%d)", name, name, old, name, n)
		}
		dims[name] = n
	}
	return dims, nil
}

// CheckDims checks bindings of g's dims: no dim and no extent of a value
// negative, every input, param and output with at least one element (a
// state may be empty: a KV cache before the first token), and no value's
// byte count past int64. Values over a dim that is not bound are skipped (a
// command may derive it).
func (g *Graph) CheckDims(dims map[string]int64) error {
	var errs []error
	for _, name := range g.Dims {
		if n, ok := dims[name]; ok && n < 0 {
			errs = append(errs, fmt.Errorf("%s=%d is negative: a dim counts something", name, n))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	kinds := map[*Value]string{}
	for kind, vs := range map[string][]*Value{"input": g.Inputs, "param": g.Params, "state": g.States, "output": g.Outputs} {
		for _, v := range vs {
			kinds[v] = kind
		}
	}
	for _, n := range g.Nodes {
		for _, v := range n.Outs {
			if err := checkBound(v, kinds[v], dims); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > maxDimErrors {
		errs = append(errs[:maxDimErrors], fmt.Errorf("and %d more", len(errs)-maxDimErrors))
	}
	return errors.Join(errs...)
}

// maxDimErrors is how many values CheckDims reports.
const maxDimErrors = 3

// checkBound checks one value at bound dims; kind is "input", "param",
// "state" or "output" for a leaf or an output ("" for another value), and
// all but a state must have elements.
func checkBound(v *Value, kind string, dims map[string]int64) error {
	var syms []string
	for _, d := range v.Type.Shape {
		syms = append(syms, d.Symbols()...)
	}
	for _, s := range syms {
		if _, ok := dims[s]; !ok {
			return nil
		}
	}
	what := v.Ref()
	if kind != "" {
		what = kind + " " + v.Name
	}
	for _, d := range v.Type.Shape {
		n, err := d.Eval(dims)
		switch {
		case err != nil:
			return fmt.Errorf("%s : %s: %w", what, v.Type, err)
		case n < 0 || n == 0 && kind != "" && kind != "state":
			return fmt.Errorf("%s : %s: extent %s is %d at %s", what, v.Type, d, n, bindings(dims, d.Symbols()))
		}
	}
	bytes, err := v.Type.Bytes()
	if err == nil {
		_, err = bytes.Eval(dims)
	}
	if err != nil {
		return fmt.Errorf("%s : %s: its byte count %w", what, v.Type, err)
	}
	return nil
}
