package frontend_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/diag"
	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/specs"
)

// FuzzParse feeds arbitrary text to the parser and checker: they must never
// panic, must return either a verified graph or a positioned diag.List, and
// every error must point into the file. The seed corpus (every shipped and
// malformed spec, plus testdata/fuzz) runs in every `go test`.
func FuzzParse(f *testing.F) {
	for _, name := range specs.Names() {
		_, src, _ := specs.Source(name)
		f.Add(src)
	}
	malformed, _ := filepath.Glob("../testdata/malformed/*.fu")
	for _, path := range malformed {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, src string) {
		g, err := frontend.Parse("fuzz.fu", src)
		if err == nil {
			if verr := g.Verify(); verr != nil {
				t.Fatalf("built graph does not verify: %v", verr)
			}
			return
		}
		list, ok := err.(diag.List)
		if !ok || len(list) == 0 {
			t.Fatalf("error %T %v is not a non-empty diag.List", err, err)
		}
		for _, e := range list {
			if !e.Pos.IsValid() {
				t.Fatalf("error without a position: %v", e)
			}
		}
		_ = list.Render(src)
	})
}

// FuzzArithmetic builds specs whose consts and shapes are arithmetic on
// fuzzed integers and floats, then binds the dim to a fuzzed value: the
// checker must never panic and never accept what its arithmetic cannot
// hold; a graph it builds has finite consts, positive constant extents
// and byte counts within int64, and CheckDims either accepts a binding
// whose every byte count evaluates or reports it.
func FuzzArithmetic(f *testing.F) {
	f.Add(int64(4096), int64(2), 1.5, uint8(0), int64(2))
	f.Add(int64(1<<62), int64(2), 0.0, uint8(2), int64(1))
	f.Add(int64(-9223372036854775807), int64(-1), 1e300, uint8(1|2<<2), int64(1))
	f.Add(int64(7), int64(0), 2.0, uint8(3|3<<2), int64(3))
	f.Add(int64(64), int64(64), 1e-3, uint8(2|2<<2), int64(1<<58))
	f.Add(int64(8), int64(8), 1e308, uint8(0|2<<2), int64(-1))
	ops := []string{"+", "-", "*", "/"}
	f.Fuzz(func(t *testing.T, a, b int64, x float64, op uint8, bind int64) {
		src := fmt.Sprintf(`layer arith
dim B
const a = %s, b = %s, c = a %s b, s = %s %s a
input  x : f32[B, c]
output y : f32[B, c]
y = x * s + x
`, intLiteral(a), intLiteral(b), ops[op%4], floatLiteral(x), ops[op/4%4])
		g, err := frontend.Parse("arith.fu", src)
		if err != nil {
			list, ok := err.(diag.List)
			if !ok || len(list) == 0 {
				t.Fatalf("error %T %v is not a non-empty diag.List", err, err)
			}
			for _, e := range list {
				if !e.Pos.IsValid() || e.Hint == "" && strings.Contains(e.Msg, "int64") {
					t.Fatalf("error without a position or a hint: %v", e)
				}
			}
			return
		}
		if err := g.Verify(); err != nil {
			t.Fatalf("built graph does not verify: %v\n%s", err, src)
		}
		for name, v := range g.Consts {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("const %s = %g accepted\n%s", name, v, src)
			}
		}
		for _, n := range g.Nodes {
			for _, v := range n.Outs {
				if _, err := v.Type.Bytes(); err != nil {
					t.Fatalf("%s : %s accepted: %v\n%s", v.Ref(), v.Type, err, src)
				}
				for _, d := range v.Type.Shape {
					if c, ok := d.Value(); ok && c <= 0 {
						t.Fatalf("%s : %s accepted with extent %d\n%s", v.Ref(), v.Type, c, src)
					}
				}
			}
		}
		dims := map[string]int64{"B": bind}
		if err := g.CheckDims(dims); err == nil {
			for _, v := range append(g.Inputs, g.Outputs...) {
				bytes, _ := v.Type.Bytes()
				if n, err := bytes.Eval(dims); err != nil || n <= 0 {
					t.Fatalf("CheckDims accepted B=%d where %s takes %d bytes (%v)\n%s", bind, v.Name, n, err, src)
				}
			}
		}
	})
}

// intLiteral writes n as the spec writes it: a literal, negated when
// negative (the smallest int64 as an expression).
func intLiteral(n int64) string {
	switch {
	case n == math.MinInt64:
		return "(-9223372036854775807 - 1)"
	case n < 0:
		return fmt.Sprintf("(-%d)", -n)
	}
	return fmt.Sprint(n)
}

// floatLiteral writes a finite x as a spec float literal; NaN and Inf have
// none, so they are written as expressions that fold to them.
func floatLiteral(x float64) string {
	switch {
	case math.IsNaN(x):
		return "(0.0 / 0.0)"
	case math.IsInf(x, 0):
		return "(1e308 * 10.0)"
	case x < 0:
		return "(-" + floatLiteral(-x) + ")"
	}
	return strconv.FormatFloat(x, 'e', -1, 64)
}
