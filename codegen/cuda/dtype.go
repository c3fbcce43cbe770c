package cuda

import (
	"fmt"
	"math"
	"strconv"

	"github.com/fuser-dev/fuser/ir"
)

// ctype is the C storage type of a dtype: bf16 and f16 are raw 16-bit
// words, fp8 a byte.
func ctype(d ir.DType) string {
	switch d {
	case ir.BF16, ir.F16:
		return "u16"
	case ir.F32:
		return "float"
	case ir.FP8E4M3:
		return "u8"
	case ir.I32:
		return "int"
	}
	return "void"
}

// dsuf names a dtype in the helper functions (fz_ld_bf16, fz_st8_f32, ...).
func dsuf(d ir.DType) string {
	switch d {
	case ir.BF16:
		return "bf16"
	case ir.F16:
		return "f16"
	case ir.F32:
		return "f32"
	case ir.FP8E4M3:
		return "fp8"
	case ir.I32:
		return "i32"
	}
	return "invalid"
}

// vecAlign is the byte alignment the 8-element vector access of a dtype
// needs.
func vecAlign(d ir.DType) int {
	if d == ir.FP8E4M3 {
		return 8
	}
	return 16
}

// flit prints a float constant as a C float literal.
func flit(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "FZ_INF"
	case math.IsInf(x, -1):
		return "(-FZ_INF)"
	case math.IsNaN(x):
		return "__int_as_float(0x7fc00000)"
	}
	s := strconv.FormatFloat(float64(float32(x)), 'g', 9, 32)
	if !containsAny(s, ".eE") {
		s += ".0"
	}
	if x < 0 {
		return "(" + s + "f)"
	}
	return s + "f"
}

// dlit prints a double constant.
func dlit(x float64) string {
	s := strconv.FormatFloat(x, 'g', 17, 64)
	if !containsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

func containsAny(s, chars string) bool {
	for _, c := range chars {
		for _, d := range s {
			if c == d {
				return true
			}
		}
	}
	return false
}

// checkDType reports dtypes the generator cannot store.
func checkDType(v *ir.Value) error {
	switch v.Type.DType {
	case ir.BF16, ir.F16, ir.F32, ir.FP8E4M3, ir.I32:
		return nil
	}
	return fmt.Errorf("%s has unsupported dtype %s", v.Ref(), v.Type.DType)
}
