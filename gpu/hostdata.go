package gpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/runtime"
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
			binary.LittleEndian.PutUint16(b, uint16(runtime.EncodeMinifloat(interp.RoundF16(x), 10, 15)))
		case ir.FP8E4M3:
			b[0] = byte(runtime.EncodeMinifloat(interp.RoundFP8E4M3(x), 3, 7))
		case ir.F32:
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(x)))
		case ir.I32:
			binary.LittleEndian.PutUint32(b, uint32(int32(x)))
		}
	}
	return out
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
