package interp

import (
	"math"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
)

// build parses and builds an inline spec.
func build(t *testing.T, src string) *ir.Graph {
	t.Helper()
	g, err := frontend.Parse("test.fu", src)
	if err != nil {
		t.Fatalf("spec does not build: %v\n%s", err, src)
	}
	return g
}

// subst replaces each {{key}} in src.
func subst(src string, kv ...string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		src = strings.ReplaceAll(src, "{{"+kv[i]+"}}", kv[i+1])
	}
	return src
}

// setup builds random inputs and completed dims.
func setup(t *testing.T, g *ir.Graph, dims map[string]int64, seed int64) (map[string]*Tensor, map[string]int64) {
	t.Helper()
	in, err := RandomInputs(g, dims, seed)
	if err != nil {
		t.Fatalf("RandomInputs: %v", err)
	}
	full, _, err := DeriveDims(g, dims)
	if err != nil {
		t.Fatalf("DeriveDims: %v", err)
	}
	return in, full
}

// run runs g without rounding and fails the test on error.
func run(t *testing.T, g *ir.Graph, dims map[string]int64, in map[string]*Tensor) *Result {
	t.Helper()
	res, err := Run(g, dims, in, Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// relErr is max|got-want| / max|want|: the error relative to the tensor's
// scale, so that entries near 0 do not dominate.
func relErr(got, want []float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	num, den := 0.0, 0.0
	for i := range got {
		if math.IsNaN(got[i]) != math.IsNaN(want[i]) || math.IsInf(got[i], 0) || math.IsInf(want[i], 0) {
			if got[i] != want[i] {
				return math.Inf(1)
			}
			continue
		}
		num = math.Max(num, math.Abs(got[i]-want[i]))
		den = math.Max(den, math.Abs(want[i]))
	}
	if den == 0 {
		return num
	}
	return num / den
}

// close checks got against want to 1e-12 relative error.
func close(t *testing.T, what string, got *Tensor, want []float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no tensor", what)
	}
	if e := relErr(got.Data, want); e > 1e-12 {
		t.Fatalf("%s: relative error %.3g (shape %v)\n got %v\nwant %v", what, e, got.Shape, head(got.Data), head(want))
	}
	if allZero(want) {
		t.Fatalf("%s: the expected tensor is all zeros: the test checks nothing", what)
	}
}

func head(x []float64) []float64 { return x[:min(len(x), 12)] }

func allZero(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// vec returns the n values of t from offset off.
func vec(t *Tensor, off, n int) []float64 { return t.Data[off : off+n] }
