package interp

import (
	"math"

	"github.com/fuser-dev/fuser/ir"
)

// cast converts to dtype to: float dtypes keep the value (Options.Round
// rounds it afterwards); i32 truncates toward zero, saturating to the i32
// range, NaN giving 0.
func cast(x *Tensor, to ir.DType) *Tensor {
	out := x.Clone()
	if to != ir.I32 {
		return out
	}
	for i, v := range out.Data {
		switch {
		case math.IsNaN(v):
			v = 0
		case v >= math.MaxInt32:
			v = math.MaxInt32
		case v <= math.MinInt32:
			v = math.MinInt32
		default:
			v = math.Trunc(v)
		}
		out.Data[i] = v
	}
	return out
}

// unaryFunc returns the element function of a unary op; c is softcap's cap.
func unaryFunc(op ir.Op, c float64) func(float64) float64 {
	switch op {
	case ir.OpNeg:
		return func(x float64) float64 { return -x }
	case ir.OpExp:
		return math.Exp
	case ir.OpLog:
		return math.Log
	case ir.OpSqrt:
		return math.Sqrt
	case ir.OpRsqrt:
		return func(x float64) float64 { return 1 / math.Sqrt(x) }
	case ir.OpTanh:
		return math.Tanh
	case ir.OpSilu:
		return func(x float64) float64 { return x / (1 + math.Exp(-x)) }
	case ir.OpGelu:
		return func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
	case ir.OpSigmoid:
		return func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	case ir.OpSoftcap:
		return func(x float64) float64 { return c * math.Tanh(x/c) }
	}
	panic("interp: not a unary op: " + op.String())
}

// unary applies an element-wise op.
func unary(op ir.Op, c float64, x *Tensor) *Tensor {
	f := unaryFunc(op, c)
	out := New(x.Shape...)
	for i, v := range x.Data {
		out.Data[i] = f(v)
	}
	return out
}

// binaryFunc returns the element function of a binary op.
func binaryFunc(op ir.Op) func(a, b float64) float64 {
	switch op {
	case ir.OpAdd:
		return func(a, b float64) float64 { return a + b }
	case ir.OpSub:
		return func(a, b float64) float64 { return a - b }
	case ir.OpMul:
		return func(a, b float64) float64 { return a * b }
	case ir.OpDiv:
		return func(a, b float64) float64 { return a / b }
	case ir.OpMax:
		return math.Max
	case ir.OpMin:
		return math.Min
	}
	panic("interp: not a binary op: " + op.String())
}

// binary applies a broadcasting element-wise op to a and b, giving a tensor
// of shape out.
func binary(op ir.Op, a, b *Tensor, out []int) (*Tensor, error) {
	ia, err := broadcastIndex(a.Shape, out)
	if err != nil {
		return nil, err
	}
	ib, err := broadcastIndex(b.Shape, out)
	if err != nil {
		return nil, err
	}
	f := binaryFunc(op)
	res := New(out...)
	for i := range res.Data {
		ja, jb := i, i
		if ia != nil {
			ja = ia[i]
		}
		if ib != nil {
			jb = ib[i]
		}
		res.Data[i] = f(a.Data[ja], b.Data[jb])
	}
	return res, nil
}
