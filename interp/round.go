package interp

import (
	"math"

	"github.com/fuser-dev/fuser/ir"
)

// Round returns x rounded to the nearest value of dtype dt, ties to even:
// the value a kernel storing x as dt would read back. i32 values are returned
// unchanged.
func Round(x float64, dt ir.DType) float64 {
	switch dt {
	case ir.BF16:
		return RoundBF16(x)
	case ir.F16:
		return RoundF16(x)
	case ir.F32:
		return RoundF32(x)
	case ir.FP8E4M3:
		return RoundFP8E4M3(x)
	}
	return x
}

// RoundBF16 rounds x to bfloat16 (8 significant bits, the float32 exponent
// range with subnormals), ties to even, overflowing to ±Inf. It rounds once,
// directly from float64 (no double rounding through float32).
func RoundBF16(x float64) float64 {
	return roundFormat(x, 7, -126, 0x1.fep127, false)
}

// RoundF16 rounds x to IEEE binary16 (11 significant bits, exponents -14..15,
// subnormals down to 2^-24), ties to even, overflowing to ±Inf from 65520 on.
func RoundF16(x float64) float64 {
	return roundFormat(x, 10, -14, 65504, false)
}

// RoundF32 rounds x to IEEE binary32 as float32(x) does: ties to even,
// subnormals, overflow to ±Inf.
func RoundF32(x float64) float64 {
	return roundFormat(x, 23, -126, math.MaxFloat32, false)
}

// RoundFP8E4M3 rounds x to OCP FP8 E4M3 (the "fn" variant: 4 significant
// bits, exponents -6..8, subnormals down to 2^-9, no infinities, largest
// finite 448), ties to even, with the OCP saturating conversion: finite
// values beyond ±448 and ±Inf become ±448; NaN stays NaN.
func RoundFP8E4M3(x float64) float64 {
	return roundFormat(x, 3, -6, 448, true)
}

// roundFormat rounds x to a binary floating-point format with mant explicit
// mantissa bits, smallest normal exponent emin (subnormals below it) and
// largest finite value maxFinite. Values rounding past maxFinite become Inf,
// or maxFinite when saturate is set.
func roundFormat(x float64, mant, emin int, maxFinite float64, saturate bool) float64 {
	if x == 0 || math.IsNaN(x) {
		return x
	}
	if math.IsInf(x, 0) {
		if saturate {
			return math.Copysign(maxFinite, x)
		}
		return x
	}
	a := math.Abs(x)
	_, e := math.Frexp(a) // a = f * 2^e with f in [0.5, 1): the leading bit is 2^(e-1)
	q := max(e-1, emin) - mant
	r := math.Ldexp(math.RoundToEven(math.Ldexp(a, -q)), q)
	if r > maxFinite {
		r = math.Inf(1)
		if saturate {
			r = maxFinite
		}
	}
	return math.Copysign(r, x)
}

// roundAll rounds every element of t to dt in place.
func roundAll(t *Tensor, dt ir.DType) {
	if dt == ir.I32 || dt == ir.Invalid {
		return
	}
	for i, x := range t.Data {
		t.Data[i] = Round(x, dt)
	}
}
