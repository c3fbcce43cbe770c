package specgen

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"

	"github.com/fuser-dev/fuser/codegen/cuda"
	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/interp"

	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// Tolerance bounds the relative difference (max |got − want| / scale, the
// scale max |want| but at least Floor) between a plan run by the
// interpreter and the written graph. Both compute in float64 and a plan only
// reorders the arithmetic (an online softmax, a moved scale, a split
// reduction), whose rounding error is a few ulps of 2⁻⁵² per op, far below it.
const Tolerance = 1e-12

// Floor is the least scale of a comparison. Generated inputs are O(1), so
// intermediates are too, and an output that is a difference of two of them
// which nearly cancel (two softmaxes subtracted: 1e-5 left of 0.3) carries
// their rounding, 1e-16 of O(1), which relative to its own max would be
// 1e-11. A wrong plan is still off by far more than 1e-12 · Floor.
const Floor = 1e-2

// Failure is a way the compiler disagrees with a spec: Stage names where
// (check, plan, run, compare, traffic, panic) and Err says what.
type Failure struct {
	Stage string
	Err   error
}

func (f *Failure) Error() string { return f.Stage + ": " + f.Err.Error() }

func (f *Failure) Unwrap() error { return f.Err }

func fail(stage string, format string, args ...any) error {
	return &Failure{Stage: stage, Err: fmt.Errorf(format, args...)}
}

// Check runs s through the compiler and reports the first disagreement: the
// spec must check, and its dims bind; both pipelines must plan it (the
// graph verified after every pass, the plan after every pass that leaves it
// whole: passes.Run does both); the fused and the unfused plans run by
// the interpreter must equal the written graph to Tolerance, outputs and
// states; the fused plan must not move more bytes than the unfused one; and
// nothing may panic. A Failure says which.
func Check(s Spec) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fail("panic", "%v\n%s", r, debug.Stack())
		}
	}()
	g, err := frontend.Parse(s.Name+".fu", s.Source)
	if err != nil {
		return fail("check", "%w", err)
	}
	if err := g.CheckDims(s.Dims); err != nil {
		return fail("check", "dims %s: %w", DimsString(s.Dims), err)
	}
	in, err := interp.RandomInputs(g, s.Dims, 1)
	if err != nil {
		return fail("run", "random inputs: %w", err)
	}
	want, err := interp.Run(g, s.Dims, in, interp.Options{})
	if err != nil {
		return fail("run", "written graph: %w", err)
	}
	var bytes [2]int64
	for i, pipeline := range [][]passes.Pass{passes.Fused, passes.Unfused} {
		name := [2]string{"fused", "unfused"}[i]
		st, err := passes.Run(g, pipeline, passes.Options{Dims: s.Dims, Check: cuda.Emittable, GemmWGMMA: cuda.GemmWGMMA, GemvTiles: cuda.GemvTiles, GemvCols: cuda.GemvCols})
		if err != nil {
			return fail("plan", "%s: %w", name, err)
		}
		got, err := interp.RunPlan(st.Plan, s.Dims, in, interp.PlanOptions{})
		if err != nil {
			return fail("run", "%s plan: %w\n%s", name, err, st.Plan)
		}
		if err := sameResults(got, want); err != nil {
			return fail("compare", "%s plan: %w\n%s", name, err, st.Plan)
		}
		costs, err := st.Plan.Costs(s.Dims)
		if err != nil {
			return fail("traffic", "%s plan: %w", name, err)
		}
		bytes[i] = plan.Total(costs).Bytes()
	}
	if bytes[0] > bytes[1] {
		return fail("traffic", "the fused plan moves %d bytes, the unfused one %d", bytes[0], bytes[1])
	}
	return nil
}

// sameResults compares every output and state of got with want.
func sameResults(got, want *interp.Result) error {
	if len(got.Outputs) != len(want.Outputs) || len(got.States) != len(want.States) {
		return fmt.Errorf("%d outputs and %d states, want %d and %d", len(got.Outputs), len(got.States), len(want.Outputs), len(want.States))
	}
	for _, side := range []struct {
		what      string
		got, want map[string]*interp.Tensor
	}{{"output", got.Outputs, want.Outputs}, {"state", got.States, want.States}} {
		for name, w := range side.want {
			if err := same(side.got[name], w); err != nil {
				return fmt.Errorf("%s %s: %w", side.what, name, err)
			}
		}
	}
	return nil
}

// same compares two tensors to Tolerance relative to max |want| (at least
// Floor). A value
// that is NaN or infinite on one side only is a difference; on both sides
// it must be the same (a NaN matching a NaN).
func same(got, want *interp.Tensor) error {
	if got == nil {
		return errors.New("missing")
	}
	if !got.SameShape(want.Shape) {
		return fmt.Errorf("shape %v, want %v", got.Shape, want.Shape)
	}
	scale, worst, at := Floor, 0.0, -1
	for _, w := range want.Data {
		if !math.IsInf(w, 0) && !math.IsNaN(w) {
			scale = max(scale, math.Abs(w))
		}
	}
	for i, w := range want.Data {
		x := got.Data[i]
		if math.IsNaN(w) || math.IsInf(w, 0) || math.IsNaN(x) || math.IsInf(x, 0) {
			if x != w && !(math.IsNaN(x) && math.IsNaN(w)) {
				return fmt.Errorf("element %d is %g, want %g", i, x, w)
			}
			continue
		}
		if d := math.Abs(x - w); d > worst {
			worst, at = d, i
		}
	}
	worst /= scale
	if !(worst <= Tolerance) {
		return fmt.Errorf("relative difference %.3g at element %d (%g, want %g; scale %g)", worst, at, got.Data[at], want.Data[at], scale)
	}
	return nil
}
