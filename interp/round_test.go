package interp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fuser-dev/fuser/ir"
)

// bf16 decodes bfloat16 bits.
func bf16(bits uint16) float64 { return float64(math.Float32frombits(uint32(bits) << 16)) }

// f16 decodes IEEE binary16 bits.
func f16(bits uint16) float64 {
	sign := 1.0
	if bits&0x8000 != 0 {
		sign = -1
	}
	e, m := int(bits>>10&0x1f), float64(bits&0x3ff)
	switch {
	case e == 0:
		return sign * m * math.Ldexp(1, -24)
	case e == 31 && m == 0:
		return math.Inf(int(sign))
	case e == 31:
		return math.NaN()
	}
	return sign * (1 + m/1024) * math.Ldexp(1, e-15)
}

// fp8 decodes OCP E4M3 (fn) bits.
func fp8(bits uint8) float64 {
	sign := 1.0
	if bits&0x80 != 0 {
		sign = -1
	}
	e, m := int(bits>>3&0xf), float64(bits&7)
	switch {
	case e == 0:
		return sign * m * math.Ldexp(1, -9)
	case e == 15 && m == 7:
		return math.NaN()
	}
	return sign * (1 + m/8) * math.Ldexp(1, e-7)
}

func f32bits(b uint32) float64 { return float64(math.Float32frombits(b)) }

func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

func TestRoundBF16(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want float64
	}{
		{"one", 1, bf16(0x3f80)},
		{"tie to even, down", f32bits(0x3f808000), bf16(0x3f80)},
		{"tie to even, up", f32bits(0x3f818000), bf16(0x3f82)},
		{"above tie", f32bits(0x3f808001), bf16(0x3f81)},
		{"below tie", f32bits(0x3f807fff), bf16(0x3f80)},
		{"pi", math.Pi, bf16(0x4049)},
		{"negative", -f32bits(0x40490fdb), bf16(0xc049)},
		{"no double rounding", 1 + 0x1p-8 + 0x1p-40, bf16(0x3f81)},
		{"largest finite", bf16(0x7f7f), bf16(0x7f7f)},
		{"just below overflow tie", f32bits(0x7f7f7fff), bf16(0x7f7f)},
		{"overflow tie to inf", f32bits(0x7f7f8000), math.Inf(1)},
		{"huge", 1e300, math.Inf(1)},
		{"-huge", -1e300, math.Inf(-1)},
		{"smallest subnormal", 0x1p-133, bf16(0x0001)},
		{"half smallest subnormal ties to zero", 0x1p-134, 0},
		{"1.5 smallest subnormal ties to 2", 3 * 0x1p-134, bf16(0x0002)},
		{"smallest normal", 0x1p-126, bf16(0x0080)},
		{"negative zero", math.Copysign(0, -1), math.Copysign(0, -1)},
		{"tiny negative to -0", -0x1p-140, math.Copysign(0, -1)},
		{"inf", math.Inf(-1), math.Inf(-1)},
		{"nan", math.NaN(), math.NaN()},
	}
	for _, tc := range tests {
		if got := RoundBF16(tc.in); !sameFloat(got, tc.want) {
			t.Errorf("%s: RoundBF16(%g) = %g, want %g", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestRoundF16(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want float64
	}{
		{"one", 1, f16(0x3c00)},
		{"minus two", -2, f16(0xc000)},
		{"0.1", 0.1, f16(0x2e66)},
		{"tie to even, down", 1 + 0x1p-11, f16(0x3c00)},
		{"tie to even, up", 1 + 3*0x1p-11, f16(0x3c02)},
		{"above tie", 1 + 0x1p-11 + 0x1p-30, f16(0x3c01)},
		{"largest finite", 65504, f16(0x7bff)},
		{"below overflow", 65519.99, f16(0x7bff)},
		{"overflow at 65520", 65520, math.Inf(1)},
		{"negative overflow", -70000, math.Inf(-1)},
		{"smallest normal", 0x1p-14, f16(0x0400)},
		{"largest subnormal", 1023 * 0x1p-24, f16(0x03ff)},
		{"smallest subnormal", 0x1p-24, f16(0x0001)},
		{"half smallest subnormal ties to zero", 0x1p-25, 0},
		{"just above half smallest subnormal", 0x1p-25 + 0x1p-40, f16(0x0001)},
		{"1.5 smallest subnormal ties to 2", 3 * 0x1p-25, f16(0x0002)},
		{"2.5 smallest subnormal ties to 2", 5 * 0x1p-25, f16(0x0002)},
		{"subnormal to normal", 0x1p-14 - 0x1p-26, f16(0x0400)},
		{"nan", math.NaN(), math.NaN()},
	}
	for _, tc := range tests {
		if got := RoundF16(tc.in); !sameFloat(got, tc.want) {
			t.Errorf("%s: RoundF16(%g) = %g, want %g", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestRoundFP8E4M3(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want float64
	}{
		{"one", 1, fp8(0x38)},
		{"0.1", 0.1, fp8(0x1d)},
		{"largest finite", 448, fp8(0x7e)},
		{"-largest finite", -448, fp8(0xfe)},
		{"tie above max saturates even", 464, 448},
		{"past max saturates", 500, 448},
		{"far past max saturates", 1e9, 448},
		{"inf saturates", math.Inf(1), 448},
		{"-inf saturates", math.Inf(-1), -448},
		{"tie to even, down", 1 + 0x1p-4, fp8(0x38)},
		{"tie to even, up", 1 + 3*0x1p-4, fp8(0x3a)},
		{"smallest normal", 0x1p-6, fp8(0x08)},
		{"smallest subnormal", 0x1p-9, fp8(0x01)},
		{"half smallest subnormal ties to zero", 0x1p-10, 0},
		{"1.5 smallest subnormal ties to 2", 3 * 0x1p-10, fp8(0x02)},
		{"largest subnormal", 7 * 0x1p-9, fp8(0x07)},
		{"nan", math.NaN(), math.NaN()},
	}
	for _, tc := range tests {
		if got := RoundFP8E4M3(tc.in); !sameFloat(got, tc.want) {
			t.Errorf("%s: RoundFP8E4M3(%g) = %g, want %g", tc.name, tc.in, got, tc.want)
		}
	}
}

// TestRoundIdempotentOnCodes checks that every finite code of the small
// formats is a fixed point and that rounding is monotone between codes.
func TestRoundIdempotentOnCodes(t *testing.T) {
	for b := range 1 << 16 {
		if x := bf16(uint16(b)); !math.IsNaN(x) && !sameFloat(RoundBF16(x), x) {
			t.Fatalf("bf16 code %#04x (%g) is not a fixed point", b, x)
		}
		if x := f16(uint16(b)); !math.IsNaN(x) && !sameFloat(RoundF16(x), x) {
			t.Fatalf("f16 code %#04x (%g) is not a fixed point", b, x)
		}
	}
	for b := range 1 << 8 {
		if x := fp8(uint8(b)); !math.IsNaN(x) && !sameFloat(RoundFP8E4M3(x), x) {
			t.Fatalf("fp8 code %#02x (%g) is not a fixed point", b, x)
		}
	}
	// Midpoints between consecutive positive f16 codes round to the even one.
	for b := range 0x7bff {
		lo, hi := f16(uint16(b)), f16(uint16(b+1))
		want := lo
		if b%2 == 1 {
			want = hi
		}
		if got := RoundF16((lo + hi) / 2); got != want {
			t.Fatalf("f16 midpoint of %#04x and %#04x: got %g, want %g", b, b+1, got, want)
		}
	}
}

func TestRoundF32MatchesConversion(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		x := (r.Float64()*2 - 1) * math.Ldexp(1, r.IntN(300)-150)
		if got, want := RoundF32(x), float64(float32(x)); !sameFloat(got, want) {
			t.Fatalf("RoundF32(%g) = %g, float32 gives %g", x, got, want)
		}
	}
	if got := RoundF32(1e39); !math.IsInf(got, 1) {
		t.Errorf("RoundF32(1e39) = %g, want +Inf", got)
	}
}

func TestRoundDispatch(t *testing.T) {
	x := 1.0 + 0x1p-6 + 0x1p-12
	for _, tc := range []struct {
		dt   ir.DType
		want float64
	}{
		{ir.BF16, RoundBF16(x)}, {ir.F16, RoundF16(x)}, {ir.F32, RoundF32(x)}, {ir.FP8E4M3, RoundFP8E4M3(x)}, {ir.I32, x},
	} {
		if got := Round(x, tc.dt); got != tc.want {
			t.Errorf("Round(%g, %s) = %g, want %g", x, tc.dt, got, tc.want)
		}
	}
}
