package runtime

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// RandomTensor returns t's bytes filled with values drawn from seed (the
// same seed and spec give the same bytes): a float tensor gets m·s/M, m a
// uniform integer in [-M, M], so that the values are exact in their dtype
// (M = 128 for BF16, 1024 for F16 and F32, 8 for F8_E4M3; F8_E4M3 values
// under its smallest subnormal, 2⁻⁹, round), and s = 2^-k the
// power of two nearest 1/√fan-in (fan-in the first extent of a tensor of
// rank 2 or more, 1 otherwise), the scale that keeps a matmul's outputs
// near its inputs' size. I32 tensors (positions, page tables) are zero:
// random ones would not be valid.
func RandomTensor(t TensorSpec, seed uint64) ([]byte, error) {
	n := t.Bytes()
	if n < 0 {
		return nil, fmt.Errorf("runtime: random %s: dtype %q shape %v", t.Name, t.DType, t.Shape)
	}
	out := make([]byte, n)
	if t.DType == "I32" {
		return out, nil
	}
	fanIn := int64(1)
	if len(t.Shape) >= 2 {
		fanIn = max(1, t.Shape[0])
	}
	scale := math.Ldexp(1, -int(math.Round(math.Log2(math.Sqrt(float64(fanIn))))))
	steps := map[string]int64{"BF16": 128, "F16": 1024, "F32": 1024, "F8_E4M3": 8}[t.DType]
	rng := rand.New(rand.NewPCG(seed, hashName(t.Name)))
	size := dtypeSizes[t.DType]
	for i := int64(0); i < n; i += size {
		x := float64(rng.Int64N(2*steps+1)-steps) / float64(steps) * scale
		b := out[i:]
		switch t.DType {
		case "BF16":
			binary.LittleEndian.PutUint16(b, uint16(math.Float32bits(float32(x))>>16))
		case "F16":
			binary.LittleEndian.PutUint16(b, uint16(EncodeMinifloat(x, 10, 15)))
		case "F32":
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(x)))
		case "F8_E4M3":
			b[0] = byte(EncodeMinifloat(x, 3, 7))
		}
	}
	return out, nil
}

// hashName is FNV-1a of name: each tensor of a layer draws its own stream.
func hashName(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// EncodeMinifloat encodes x, exactly representable, in a binary format with
// mant mantissa bits and exponent bias bias (f16, fp8 e4m3): sign, biased
// exponent, mantissa, subnormals included. NaN gets the all-ones pattern.
func EncodeMinifloat(x float64, mant, bias int) uint32 {
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
