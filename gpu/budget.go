package gpu

import (
	"fmt"
	"math"

	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
)

// Error budget.
//
// The layer tolerance (Thresholds) bounds err/(|want| + max|want|) by a
// constant per dtype, so an output dominated by a residual add hides an
// error in a smaller term: zeroing attention's output in Llama-3-8B read
// 0.34 of it. The budget measures what the dtypes cost this very layer
// instead, as FlashAttention's tests do against PyTorch: the unfused
// plan's rounded reference (interp.RunPlan with Options.Round: every op
// result stored at its dtype, as an op-by-op eager framework computes the
// layer) is the baseline, and a GPU result passes when
//
//	max|got − want| ≤ 2 · max(max|base − want|, u · max|want|)
//
// want being the float64 layer and u the result's unit roundoff: the
// budget is never below one rounding of the largest element, which over
// a few dozen elements the baseline can miss by luck (the tiny spec's 32
// outputs: the fused plan's rounded reference at 2.35 times the
// baseline's error, 0.92 of this budget, gpu.TestCasesOnCPU). The budget
// applies to results computed through a 16-bit or fp8 value (Budgeted):
// the rounded reference does not model f32 arithmetic (accumulation
// order, fast intrinsics), which is what an f32-only layer's errors are.
// bench/refcheck.py applies the rule with PyTorch's bf16 as the baseline
// (.gpu/refcheck.sh).
const budgetFactor = 2

// Budgeted reports whether the budget applies to the layer output v: some
// value it is computed from is stored at 16 bits or fewer.
func Budgeted(v *ir.Value) bool {
	return LayerToleranceOf(v) > LayerTolerance(ir.F32)
}

// BudgetDiff is one output's comparison against its error budget.
type BudgetDiff struct {
	// Elements counts the compared elements.
	Elements int
	// Err is max|got − want|, at ErrAt; Base is max|base − want|, the
	// baseline's error; Limit is budgetFactor·max(Base, U·Scale), Scale
	// being max|want| and U the result's unit roundoff.
	Err, Base, Limit, Scale, U float64
	ErrAt                      int
	// Fail says why got fails whatever the numbers: a non-finite value
	// where want is finite, or a length that is not want's.
	Fail string
	// NA says why the budget does not apply: the baseline holds a
	// non-finite value where want is finite, so it bounds nothing.
	NA string
}

// OK reports whether got is within the budget (true where it does not apply).
func (d BudgetDiff) OK() bool { return d.Fail == "" && (d.NA != "" || d.Err <= d.Limit) }

// Ratio is Err / Limit (+Inf for a non-finite result, 0 where the budget
// does not apply).
func (d BudgetDiff) Ratio() float64 {
	switch {
	case d.Fail != "":
		return math.Inf(1)
	case d.NA != "":
		return 0
	case d.Limit == 0:
		if d.Err == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return d.Err / d.Limit
}

func (d BudgetDiff) String() string {
	switch {
	case d.Fail != "":
		return fmt.Sprintf("%d elements; %s", d.Elements, d.Fail)
	case d.NA != "":
		return fmt.Sprintf("%d elements; %s", d.Elements, d.NA)
	}
	return fmt.Sprintf("%d elements; err %.3g at %d = %.2f×budget (%d×max(base %.3g, %g×scale %.3g))",
		d.Elements, d.Err, d.ErrAt, d.Ratio(), budgetFactor, d.Base, d.U, d.Scale)
}

// CompareBudget compares got and base (the baseline's result) with want
// over the elements valid says exist (all when nil), u being the result's
// unit roundoff. Elements whose want is not finite are left to Compare,
// which requires got to match them.
func CompareBudget(got, base, want []float64, valid func(i int) bool, u float64) BudgetDiff {
	d := BudgetDiff{ErrAt: -1, U: u}
	if len(got) != len(want) || len(base) != len(want) {
		d.Fail = fmt.Sprintf("lengths %d (got) and %d (base) against %d", len(got), len(base), len(want))
		return d
	}
	for i, w := range want {
		if valid != nil && !valid(i) || !finite(w) {
			continue
		}
		d.Elements++
		d.Scale = max(d.Scale, math.Abs(w))
		if !finite(got[i]) {
			d.Fail, d.ErrAt, d.NA = fmt.Sprintf("got %g at %d where the reference is %g", got[i], i, w), i, ""
			return d
		}
		if !finite(base[i]) && d.NA == "" {
			d.NA = fmt.Sprintf("no budget: the baseline holds %g at %d where the reference is %g", base[i], i, w)
		}
		d.Base = max(d.Base, math.Abs(base[i]-w))
		if e := math.Abs(got[i] - w); d.ErrAt < 0 || e > d.Err {
			d.Err, d.ErrAt = e, i
		}
	}
	d.Limit = budgetFactor * max(d.Base, u*d.Scale)
	return d
}

// LayerBudget compares got, a plan's result for the layer value v (an
// output or a state after the step, as the suite's layer check reads it),
// with its error budget: layer is the float64 layer, base the baseline
// (the unfused plan's rounded reference, Reference.Kernels). It reports
// false where the budget does not apply to v (Budgeted).
func LayerBudget(v *ir.Value, got []float64, layer, base *interp.Result) (BudgetDiff, bool, error) {
	if !Budgeted(v) {
		return BudgetDiff{}, false, nil
	}
	want, b := layer.Outputs[v.Name], base.Outputs[v.Name]
	if IsState(v) {
		want, b = layer.States[v.Name], base.States[v.Name]
	}
	if want == nil || b == nil {
		return BudgetDiff{}, false, fmt.Errorf("%s: no float64 or baseline result", v.Name)
	}
	return CompareBudget(got, b.Data, want.Data, nil, unitRoundoff(v.Type.DType)), true, nil
}
