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
// rounding errors of those terms, not of their own magnitude. max|want| is
// over the finite references, and a NaN or Inf on either side passes only
// when the other side holds the same value: a NaN or Inf where the
// reference is finite fails, so an output element a kernel leaves
// unwritten (the outputs are poisoned with NaN before every run) fails, and
// a non-finite reference neither poisons the scale nor passes a finite
// result; matched non-finite values are counted and reported. An output
// whose every byte is still the poison (Unwritten) fails even where the
// reference is NaN or the dtype is i32, whose poison is -1. i32 outputs
// must be equal.
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
// probability) and normalisation, so tol = 16·u was the first bound: 2^-4
// for bf16, 2^-7 for f16, 2^-12 for f32; fp8 2^-2, not 16·u = 1. The
// suite logs the worst err/tol of every check; over the 4,975 checks of
// bench/results/2026-12-06-fa3/final and the 1,003 of
// bench/results/2026-12-06-rows/final the worst layer and
// fused-against-unfused checks were 0.43 of tol in bf16 (gemma2_softcap),
// 0.31 in fp8 (ops_fp8e4m3), 0.13 in f16 (gpt2, gen12) and 0.16 in f32
// (gen30). Where the worst check stays within half of a bound one binade
// tighter, the bound is that: 8·u for f16 (2^-8) and f32 (2^-13); bf16 and
// fp8 keep 16·u and 2^-2, and their layers are also held to an error
// budget measured on the layer itself (CompareBudget), which catches what
// a bound per dtype cannot.
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

// LayerToleranceOf is tol for the whole-layer value v: that of the least
// precise dtype among v and the op results it is computed from. Each plan
// stores some of those at their dtype (the unfused plan every one), and the
// reference rounds none, so an f32 output computed through a bf16 matmul
// carries bf16's errors (a cast of x @ w to f32 was 7× over f32's tol).
// Leaves (inputs, params, states) are the same bytes on both sides.
func LayerToleranceOf(v *ir.Value) float64 {
	tol := LayerTolerance(v.Type.DType)
	seen := map[*ir.Node]bool{}
	var walk func(n *ir.Node)
	walk = func(n *ir.Node) {
		if n == nil || seen[n] || n.Op.IsLeaf() {
			return
		}
		seen[n] = true
		for _, o := range n.Outs {
			tol = max(tol, LayerTolerance(o.Type.DType))
		}
		for _, a := range n.Args {
			walk(a.Def)
		}
	}
	walk(v.Def)
	return tol
}

// LayerTolerance is tol for a whole-layer output of dtype dt.
func LayerTolerance(dt ir.DType) float64 {
	switch dt {
	case ir.BF16:
		return 0x1p-4
	case ir.F16:
		return 0x1p-8
	case ir.FP8E4M3:
		return 0x1p-2
	case ir.F32:
		return 0x1p-13
	}
	return 0
}

// Diff is the comparison of one tensor.
type Diff struct {
	// Elements counts the compared elements (ragged positions past a
	// sequence's length are not compared); Bad those that failed.
	Elements, Bad int
	// NonFinite counts the compared elements whose reference is NaN or
	// ±Inf and matched (a NaN by a NaN, an Inf by the same Inf): they pass,
	// and String reports them.
	NonFinite int
	// Tol is the tolerance; Scale is max|want| over the finite references.
	Tol, Scale float64
	// Worst is the largest |got − want| / (|want| + Scale) (Inf where a
	// non-finite value meets anything but itself), at element WorstAt.
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
	nonFinite := ""
	if d.NonFinite > 0 {
		nonFinite = fmt.Sprintf("; %d non-finite references matched", d.NonFinite)
	}
	if d.Exact {
		if d.Bad == 0 {
			return fmt.Sprintf("%d elements equal%s", d.Elements, nonFinite)
		}
		return fmt.Sprintf("%d of %d elements differ; first at %d: got %g, want %g%s", d.Bad, d.Elements, d.WorstAt, d.Got, d.Want, nonFinite)
	}
	return fmt.Sprintf("%d of %d elements off; worst err %.3g = %.2f×tol (tol %.3g, scale %.3g) at %d: got %g, want %g%s",
		d.Bad, d.Elements, d.Worst, d.Ratio(), d.Tol, d.Scale, d.WorstAt, d.Got, d.Want, nonFinite)
}

// Compare compares got with want element-wise (see Thresholds); valid, when
// not nil, says which elements exist. tol = 0 asks for equality. A NaN or
// Inf on either side passes only where the other side holds the same
// non-finite value, and a NaN tolerance fails every element.
func Compare(got, want []float64, valid func(i int) bool, tol float64) Diff {
	d := Diff{Tol: tol, Exact: tol == 0, WorstAt: -1}
	if len(got) != len(want) {
		d.Bad, d.Worst = max(len(got), len(want)), math.Inf(1)
		return d
	}
	for i, w := range want {
		if (valid == nil || valid(i)) && finite(w) {
			d.Scale = max(d.Scale, math.Abs(w))
		}
	}
	for i, w := range want {
		if valid != nil && !valid(i) {
			continue
		}
		g := got[i]
		d.Elements++
		e := elementError(g, w, d.Scale, d.Exact)
		if e == 0 && !finite(w) {
			d.NonFinite++
		}
		if !(e <= tol) {
			d.Bad++
		}
		if d.WorstAt < 0 || e > d.Worst {
			d.Worst, d.WorstAt, d.Got, d.Want = e, i, g, w
			d.NaN = math.IsNaN(g)
		}
	}
	return d
}

// elementError is |g − w| / (|w| + scale): 0 where g and w are the same
// value (NaN matching NaN included), Inf where they differ and one is not
// finite, the comparison is exact or scale is 0 (every reference zero).
func elementError(g, w, scale float64, exact bool) float64 {
	switch {
	case g == w || math.IsNaN(g) && math.IsNaN(w):
		return 0
	case exact || !finite(g) || !finite(w) || scale == 0:
		return math.Inf(1)
	}
	return math.Abs(g-w) / (math.Abs(w) + scale)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

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
