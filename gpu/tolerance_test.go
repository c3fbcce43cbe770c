package gpu

import (
	"math"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
)

func TestCompare(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	want := []float64{1, -2, 0.001, 4}
	for _, tc := range []struct {
		name      string
		got, want []float64
		valid     func(int) bool
		tol       float64
		ok        bool
		worstAt   int // -1: not checked
		nonFinite int
	}{
		{"within tolerance", []float64{1.001, -2, 0.002, 4}, want, nil, 1e-3, true, -1, 0},
		{"out of tolerance", []float64{1, -2, 0.001, 4.1}, want, nil, 1e-3, false, 3, 0},
		{"NaN where the reference is finite", []float64{1, -2, nan, 4}, want, nil, 1, false, 2, 0},
		{"+Inf where the reference is finite", []float64{1, -2, inf, 4}, want, nil, 1, false, 2, 0},
		{"-Inf where the reference is finite", []float64{1, -2, 0.001, -inf}, want, nil, 1, false, 3, 0},
		{"masked NaN", []float64{1, -2, nan, 4}, want, func(i int) bool { return i != 2 }, 1e-3, true, -1, 0},
		{"finite where the reference is NaN", []float64{1, -2, 0.001, 4}, []float64{1, -2, nan, 4}, nil, 1, false, 2, 0},
		{"finite where the reference is Inf", []float64{1, -2, 0.001, 4}, []float64{1, -2, inf, 4}, nil, 1, false, 2, 0},
		{"a NaN reference leaves the others compared", []float64{1, -2, nan, 5}, []float64{1, -2, nan, 4}, nil, 1e-3, false, 3, 1},
		{"an Inf reference leaves the others compared", []float64{1, -2, inf, 5}, []float64{1, -2, inf, 4}, nil, 1e-3, false, 3, 1},
		{"-Inf where the reference is +Inf", []float64{-inf}, []float64{inf}, nil, 1, false, 0, 0},
		{"Inf where the reference is NaN", []float64{inf}, []float64{nan}, nil, 1, false, 0, 0},
		{"every reference NaN", []float64{1, 2}, []float64{nan, nan}, nil, 1, false, 0, 0},
		{"matching non-finite values", []float64{nan, inf, -inf, 4}, []float64{nan, inf, -inf, 4}, nil, 1e-3, true, -1, 3},
		{"NaN tolerance", []float64{1, -2}, []float64{1, -2}, nil, nan, false, -1, 0},
		{"exact, equal", []float64{1, 2}, []float64{1, 2}, nil, 0, true, -1, 0},
		{"exact, different", []float64{1, 2}, []float64{1, 3}, nil, 0, false, 1, 0},
		{"exact, NaN where the reference is finite", []float64{1, nan}, []float64{1, 3}, nil, 0, false, 1, 0},
		{"exact, finite where the reference is NaN", []float64{1, 3}, []float64{1, nan}, nil, 0, false, 1, 0},
		{"lengths differ", []float64{1}, []float64{1, 2}, nil, 1, false, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(tc.got, tc.want, tc.valid, tc.tol)
			if d.OK() != tc.ok {
				t.Errorf("OK() = %v, want %v: %s", d.OK(), tc.ok, d)
			}
			if !tc.ok && !math.IsNaN(tc.tol) && !(d.Ratio() > 1) {
				t.Errorf("failed with Ratio() %g, want > 1: %s", d.Ratio(), d)
			}
			if tc.worstAt >= 0 && d.WorstAt != tc.worstAt {
				t.Errorf("worst at %d, want %d: %s", d.WorstAt, tc.worstAt, d)
			}
			if d.NonFinite != tc.nonFinite {
				t.Errorf("%d non-finite references matched, want %d: %s", d.NonFinite, tc.nonFinite, d)
			}
			if tc.nonFinite > 0 && !strings.Contains(d.String(), "non-finite") {
				t.Errorf("the report does not mention the non-finite references: %s", d)
			}
		})
	}
}

func TestUnwritten(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		want bool
	}{
		{[]byte{Poison, Poison, Poison, Poison}, true},
		{[]byte{Poison, Poison, 0x7f, Poison}, false},
		{[]byte{0, 0}, false},
		{nil, false},
	} {
		if got := Unwritten(tc.b); got != tc.want {
			t.Errorf("Unwritten(% x) = %v, want %v", tc.b, got, tc.want)
		}
	}
}

// TestLayerToleranceOf checks that an f32 output takes bf16's layer
// tolerance when it is computed through a bf16 matmul, and keeps f32's when
// every op result it depends on is f32 (bf16 params read as they are).
func TestLayerToleranceOf(t *testing.T) {
	g, err := frontend.Parse("t.fu", `
layer t
dim B
input  x : bf16[B, 8]
param  w : bf16[8, 4]
param  c : bf16[4]
input  z : f32[B, 4]
output y : f32[B, 4]
output u : f32[B, 4]
y = cast(x @ w, f32)
u = z * 2.0 + cast(c, f32)
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		out  string
		want float64
	}{{"y", LayerTolerance(ir.BF16)}, {"u", LayerTolerance(ir.F32)}} {
		var v *ir.Value
		for _, o := range g.Outputs {
			if o.Name == c.out {
				v = o
			}
		}
		if v == nil {
			t.Fatalf("no output %s", c.out)
		}
		if got := LayerToleranceOf(v); got != c.want {
			t.Errorf("output %s: tol %g, want %g", c.out, got, c.want)
		}
	}
}

// TestLayerTolerancePerDType pins the layer bounds to their derivation
// and measurement (see Thresholds): 16 unit roundoffs of bf16, 8 of f16
// and f32 (their worst measured checks within half of that), so that f16
// is held to its own precision rather than bf16's, 16× tighter; fp8 2^-2.
func TestLayerTolerancePerDType(t *testing.T) {
	for dt, n := range map[ir.DType]float64{ir.BF16: 16, ir.F16: 8, ir.F32: 8} {
		if got, want := LayerTolerance(dt), n*unitRoundoff(dt); got != want {
			t.Errorf("%s: layer tol %g, want %gu = %g", dt, got, n, want)
		}
	}
	if got := LayerTolerance(ir.F16); got != LayerTolerance(ir.BF16)/16 {
		t.Errorf("f16 layer tol %g, want bf16's / 16", got)
	}
	if got := LayerTolerance(ir.FP8E4M3); got != 0x1p-2 {
		t.Errorf("fp8 layer tol %g, want 2^-2", got)
	}
}
