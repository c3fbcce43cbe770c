package gpu

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/ir"
)

// bf16 rounds xs to bf16 and back.
func bf16(xs []float64) []float64 { return Decode(Encode(xs, ir.BF16), ir.BF16) }

// residualLayer is want = x + a, a residual x of unit scale plus a term a
// of a tenth of it (attention's contribution through the output
// projection), base the sum of x and a each rounded to bf16, rounded again
// (an op-by-op bf16 layer), and got the same with a scaled by scale.
func residualLayer(n int, scale float64) (got, base, want []float64) {
	r := rand.New(rand.NewPCG(1, 2))
	x, a := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], a[i] = r.NormFloat64(), 0.1*r.NormFloat64()
	}
	xr, ar := bf16(x), bf16(a)
	for i := range x {
		want = append(want, x[i]+a[i])
		base = append(base, xr[i]+ar[i])
		got = append(got, xr[i]+scale*ar[i])
	}
	return bf16(got), bf16(base), want
}

// TestBudgetCatchesScaledTerm: a layer whose every op runs as the
// baseline's passes; the same with its smaller term scaled by 1.1 or
// zeroed fails the budget, though the dtype tolerance passes the scaled
// one (the reason for the budget).
func TestBudgetCatchesScaledTerm(t *testing.T) {
	got, base, want := residualLayer(4096, 1)
	if d := CompareBudget(got, base, want, nil, uBF16); !d.OK() || d.Ratio() > 0.51 {
		t.Errorf("as the baseline computes it: %s, want a pass at half the budget", d)
	}
	for _, scale := range []float64{1.1, 0} {
		got, base, want := residualLayer(4096, scale)
		if d := CompareBudget(got, base, want, nil, uBF16); d.OK() || d.Ratio() < 1.25 {
			t.Errorf("term scaled by %g: %s, want a failure", scale, d)
		}
		if scale == 1.1 {
			if d := Compare(got, want, nil, LayerTolerance(ir.BF16)); !d.OK() {
				t.Errorf("term scaled by 1.1: the bf16 layer tolerance fails it (%s); the budget's reason is that it does not", d)
			}
		}
	}
}

// TestBudgetEdges: non-finite results fail, a non-finite baseline leaves
// the budget out without hiding a non-finite result, non-finite references
// are left to Compare, the floor (one rounding at 2^-10 of the largest
// element) alone bounds an exact baseline, lengths
// must match and valid masks elements.
func TestBudgetEdges(t *testing.T) {
	want := []float64{1, -2, 0.5, 4}
	base := []float64{1, -2, 0.5, 4}
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name      string
		got, base []float64
		want      []float64
		valid     func(int) bool
		ok, na    bool
		inRatio   float64
	}{
		{name: "exact", got: want, base: base, want: want, ok: true},
		{name: "NaN result", got: []float64{1, nan, 0.5, 4}, base: base, want: want},
		{name: "Inf result", got: []float64{1, -2, inf, 4}, base: base, want: want},
		{name: "within the floor", got: []float64{1, -2, 0.5, 4 + 4*0x1p-10}, base: base, want: want, ok: true, inRatio: 0.5},
		{name: "past the floor", got: []float64{1, -2, 0.5, 4 + 4*0x1p-8}, base: base, want: want},
		{name: "within twice the baseline", got: []float64{1.03, -2, 0.5, 4}, base: []float64{1, -2.02, 0.5, 4}, want: want, ok: true},
		{name: "past twice the baseline", got: []float64{1.05, -2, 0.5, 4}, base: []float64{1, -2.02, 0.5, 4}, want: want},
		{name: "NaN baseline", got: []float64{9, -2, 0.5, 4}, base: []float64{nan, -2, 0.5, 4}, want: want, ok: true, na: true},
		{name: "NaN baseline, NaN result", got: []float64{1, nan, 0.5, 4}, base: []float64{nan, -2, 0.5, 4}, want: want},
		{name: "non-finite reference", got: []float64{1, 7, 0.5, 4}, base: base, want: []float64{1, nan, 0.5, 4}, ok: true},
		{name: "masked", got: []float64{1, 7, 0.5, 4}, base: base, want: want, valid: func(i int) bool { return i != 1 }, ok: true},
		{name: "length", got: []float64{1, -2, 0.5}, base: base, want: want},
	} {
		d := CompareBudget(tc.got, tc.base, tc.want, tc.valid, 0x1p-10)
		if d.OK() != tc.ok || (d.NA != "") != tc.na {
			t.Errorf("%s: %s: ok %v, no budget %v; want %v, %v", tc.name, d, d.OK(), d.NA != "", tc.ok, tc.na)
		}
		if !tc.ok && !(d.Ratio() > 1) {
			t.Errorf("%s: %s: ratio %v, want > 1", tc.name, d, d.Ratio())
		}
		if tc.inRatio > 0 && math.Abs(d.Ratio()-tc.inRatio) > 1e-9 {
			t.Errorf("%s: ratio %v, want %v", tc.name, d.Ratio(), tc.inRatio)
		}
		if d.String() == "" || !tc.ok && d.Fail == "" && !strings.Contains(d.String(), "×budget") {
			t.Errorf("%s: %q does not say why", tc.name, d.String())
		}
	}
}
