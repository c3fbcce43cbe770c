package gpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/ir/interp"
)

// Encode stores data as dt, little-endian, each value first rounded to dt
// (interp.Round: ties to even, the rounding the kernels' stores make).
func Encode(data []float64, dt ir.DType) []byte {
	size := int(dt.Size())
	out := make([]byte, len(data)*size)
	for i, x := range data {
		b := out[i*size:]
		switch dt {
		case ir.BF16:
			binary.LittleEndian.PutUint16(b, uint16(math.Float32bits(float32(interp.RoundBF16(x)))>>16))
		case ir.F16:
			binary.LittleEndian.PutUint16(b, uint16(encodeSmall(interp.RoundF16(x), 10, 15)))
		case ir.FP8E4M3:
			b[0] = byte(encodeSmall(interp.RoundFP8E4M3(x), 3, 7))
		case ir.F32:
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(x)))
		case ir.I32:
			binary.LittleEndian.PutUint32(b, uint32(int32(x)))
		}
	}
	return out
}

// encodeSmall encodes x, exactly representable, in a binary format with
// mant mantissa bits and exponent bias bias (f16, fp8 e4m3): sign, biased
// exponent, mantissa, subnormals included. NaN gets the all-ones pattern.
func encodeSmall(x float64, mant, bias int) uint32 {
	var sign uint32
	if math.Signbit(x) {
		sign = 1
	}
	ebits := map[int]int{10: 5, 3: 4}[mant]
	signBit := sign << (mant + ebits)
	switch {
	case math.IsNaN(x):
		return 1<<(mant+ebits+1) - 1
	case math.IsInf(x, 0):
		return signBit | uint32(1<<ebits-1)<<mant
	case x == 0:
		return signBit
	}
	a := math.Abs(x)
	_, e := math.Frexp(a) // a = f·2^e, f in [0.5, 1)
	exp := e - 1 + bias
	if exp <= 0 { // subnormal: a = m·2^(1-bias-mant)
		m := uint32(math.Round(math.Ldexp(a, mant+bias-1)))
		return signBit | m
	}
	m := uint32(math.Round(math.Ldexp(a, mant-(e-1)))) - 1<<mant
	return signBit | uint32(exp)<<mant | m
}

// Decode reads n values of dt.
func Decode(b []byte, dt ir.DType) []float64 {
	size := int(dt.Size())
	out := make([]float64, len(b)/size)
	for i := range out {
		p := b[i*size:]
		switch dt {
		case ir.BF16:
			out[i] = float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(p)) << 16))
		case ir.F16:
			out[i] = decodeSmall(uint32(binary.LittleEndian.Uint16(p)), 10, 5, 15, false)
		case ir.FP8E4M3:
			out[i] = decodeSmall(uint32(p[0]), 3, 4, 7, true)
		case ir.F32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
		case ir.I32:
			out[i] = float64(int32(binary.LittleEndian.Uint32(p)))
		}
	}
	return out
}

// decodeSmall decodes f16 or fp8 e4m3 (fn: no infinities, only S.1111.111
// is NaN).
func decodeSmall(v uint32, mant, ebits, bias int, fn bool) float64 {
	sign := 1.0
	if v>>(mant+ebits)&1 == 1 {
		sign = -1
	}
	e := int(v>>mant) & (1<<ebits - 1)
	m := int(v) & (1<<mant - 1)
	switch {
	case fn && e == 1<<ebits-1 && m == 1<<mant-1:
		return math.NaN()
	case !fn && e == 1<<ebits-1:
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	case e == 0:
		return sign * math.Ldexp(float64(m), 1-bias-mant)
	}
	return sign * math.Ldexp(float64(m|1<<mant), e-bias-mant)
}

// Poison is the byte every output is filled with before a run: 0xff makes
// every float dtype NaN (bf16 0xffff, f16 0xffff, f32 0xffffffff, fp8 e4m3
// 0xff) and an i32 -1, so an element a kernel fails to write cannot pass.
const Poison = 0xff

// checkFormat reports a dtype the suite cannot move.
func checkFormat(dt ir.DType) error {
	switch dt {
	case ir.BF16, ir.F16, ir.F32, ir.FP8E4M3, ir.I32:
		return nil
	}
	return fmt.Errorf("dtype %s has no device format", dt)
}
