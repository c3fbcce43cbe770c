package ir

// DType is the element type of a tensor.
type DType int

// The dtypes a spec can declare.
const (
	Invalid DType = iota
	BF16
	F16
	F32
	FP8E4M3
	I32
)

var dtypeNames = map[DType]string{BF16: "bf16", F16: "f16", F32: "f32", FP8E4M3: "fp8e4m3", I32: "i32"}

// ParseDType returns the dtype named s, or Invalid.
func ParseDType(s string) DType {
	for d, n := range dtypeNames {
		if n == s {
			return d
		}
	}
	return Invalid
}

// String returns the spec name of the dtype.
func (d DType) String() string {
	if n, ok := dtypeNames[d]; ok {
		return n
	}
	return "invalid"
}

// Size is the number of bytes of one element.
func (d DType) Size() int64 {
	switch d {
	case BF16, F16:
		return 2
	case F32, I32:
		return 4
	case FP8E4M3:
		return 1
	}
	return 0
}

// IsFloat reports whether arithmetic is defined on the dtype.
func (d DType) IsFloat() bool { return d == BF16 || d == F16 || d == F32 || d == FP8E4M3 }
