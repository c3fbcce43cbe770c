package gpu

import (
	"fmt"
	"math"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// Thresholds.
//
// An element passes when
//
//	|got − want| ≤ tol · (|want| + max|want|)
//
// where max|want| is over the compared elements of the tensor: a relative
// error of tol/2 for the largest elements, and an absolute floor of
// tol·max|want| for the elements near zero, which are the differences of
// larger terms (a residual add, a dot product of random signs) and carry the
// rounding errors of those terms, not of their own magnitude. NaN or Inf
// where the reference is finite never passes, so an output element a kernel
// leaves unwritten (the outputs are poisoned with NaN before every run)
// fails. i32 outputs must be equal.
//
// Per kernel (its inputs uploaded from the reference, so nothing but the
// kernel itself is compared), the reference is interp.RunPlan with
// Options.Round: every op result rounded to its dtype, the inputs exactly
// what the kernel reads. The kernel computes in f32 and rounds once, at the
// store. With u the unit roundoff of the storage format (bf16: 8
// significant bits, u = 2^-8; f16: 11 bits, 2^-11; fp8 e4m3: 4 bits, 2^-4)
// the two differ by at most one rounding of the result on either side (u
// each) plus one rounding per op the reference rounds and the kernel does
// not (u each, propagated by ops whose condition number is about 1: add of
// like signs, mul, rsqrt, rope's rotation, silu, exp of an exactly rounded
// argument). So
//
//	tol = u · (2 + ops)     ops: the kernel's computing (non-view) ops
//
// For f32 results u is not f32's 2^-24: the kernel accumulates dot
// products and row sums of up to ~16k terms in another order than the
// reference and uses fast intrinsics (__expf, rsqrtf: 2 ulp or so); √K·2^-24
// is about 2^-17 for K = 16384, so f32 takes u = 2^-16.
//
// Per layer (every kernel on the GPU, chained; the fused plan against the
// float64 interpreter without rounding, and against the unfused plan), the
// per-kernel errors add up over the layer's ~7 to 50 kernels and go through
// softmax (an error δ in a score is a relative error δ in its
// probability) and normalisation, so tol = 2^-4 for bf16 and f16 layers,
// 2^-2 for fp8 and 2^-12 for f32. These are bounds chosen, not measured:
// the suite logs the worst err/tol of every check, so they can be tightened
// from a run's log.
const (
	uBF16 = 0x1p-8
	uF16  = 0x1p-11
	uFP8  = 0x1p-4
	uF32  = 0x1p-16
)

// unitRoundoff is u for a storage dtype (see Thresholds); 0 for i32.
func unitRoundoff(dt ir.DType) float64 {
	switch dt {
	case ir.BF16:
		return uBF16
	case ir.F16:
		return uF16
	case ir.FP8E4M3:
		return uFP8
	case ir.F32:
		return uF32
	}
	return 0
}

// KernelTolerance is tol for an output of dtype dt of kernel k (see
// Thresholds): u·(2 + ops), u the largest unit roundoff among dt and the
// dtypes of the values the kernel computes.
func KernelTolerance(k *plan.Kernel, dt ir.DType) float64 {
	u := unitRoundoff(dt)
	if u == 0 {
		return 0
	}
	ops := 0
	for _, n := range k.Nodes {
		if plan.IsView(n.Op) {
			continue
		}
		ops++
		for _, o := range n.Outs {
			u = max(u, unitRoundoff(o.Type.DType))
		}
	}
	return u * float64(2+ops)
}

// LayerTolerance is tol for a whole-layer output of dtype dt.
func LayerTolerance(dt ir.DType) float64 {
	switch dt {
	case ir.BF16, ir.F16:
		return 0x1p-4
	case ir.FP8E4M3:
		return 0x1p-2
	case ir.F32:
		return 0x1p-12
	}
	return 0
}

// Diff is the comparison of one tensor.
type Diff struct {
	// Elements counts the compared elements (ragged positions past a
	// sequence's length are not compared); Bad those that failed.
	Elements, Bad int
	// Tol is the tolerance; Scale is max|want|.
	Tol, Scale float64
	// Worst is the largest |got − want| / (|want| + Scale) (Inf for a NaN
	// where the reference is finite), at element WorstAt.
	Worst      float64
	WorstAt    int
	Got, Want  float64
	NaN, Exact bool
}

// OK reports whether every element passed.
func (d Diff) OK() bool { return d.Bad == 0 }

// Ratio is Worst / Tol, the share of the threshold used (0 for exact
// comparisons that passed).
func (d Diff) Ratio() float64 {
	if d.Tol == 0 {
		if d.Bad > 0 {
			return math.Inf(1)
		}
		return 0
	}
	return d.Worst / d.Tol
}

func (d Diff) String() string {
	if d.Exact {
		if d.Bad == 0 {
			return fmt.Sprintf("%d elements equal", d.Elements)
		}
		return fmt.Sprintf("%d of %d elements differ; first at %d: got %g, want %g", d.Bad, d.Elements, d.WorstAt, d.Got, d.Want)
	}
	return fmt.Sprintf("%d of %d elements off; worst err %.3g = %.2f×tol (tol %.3g, scale %.3g) at %d: got %g, want %g",
		d.Bad, d.Elements, d.Worst, d.Ratio(), d.Tol, d.Scale, d.WorstAt, d.Got, d.Want)
}

// Compare compares got with want element-wise (see Thresholds); valid, when
// not nil, says which elements exist. tol = 0 asks for equality.
func Compare(got, want []float64, valid func(i int) bool, tol float64) Diff {
	d := Diff{Tol: tol, Exact: tol == 0, WorstAt: -1}
	if len(got) != len(want) {
		d.Bad = max(len(got), len(want))
		return d
	}
	for i, w := range want {
		if valid == nil || valid(i) {
			d.Scale = max(d.Scale, math.Abs(w))
		}
	}
	for i, w := range want {
		if valid != nil && !valid(i) {
			continue
		}
		g := got[i]
		d.Elements++
		var e float64
		switch {
		case d.Exact:
			if g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
				e = math.Inf(1)
			}
		case math.IsNaN(g) || math.IsInf(g, 0):
			if !(math.IsNaN(g) && math.IsNaN(w)) && g != w {
				e = math.Inf(1)
			}
		default:
			e = math.Abs(g-w) / (math.Abs(w) + d.Scale)
			if d.Scale == 0 && g != w {
				e = math.Inf(1)
			}
		}
		bad := e > tol
		if bad {
			d.Bad++
		}
		if e > d.Worst || d.WorstAt < 0 || (bad && d.Bad == 1 && d.Exact) {
			if e > d.Worst || d.WorstAt < 0 {
				d.Worst, d.WorstAt, d.Got, d.Want = e, i, g, w
				d.NaN = math.IsNaN(g)
			}
		}
	}
	return d
}

// Bitwise reports the first byte where a and b differ, or -1.
func Bitwise(a, b []byte) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
