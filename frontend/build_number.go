package frontend

import (
	"fmt"
	"math"
	"strconv"

	"github.com/fuser-dev/fuser/internal/intmath"
	"github.com/fuser-dev/fuser/ir"
)

// number is a compile-time constant: an exact int64 i when isInt, a finite
// float64 otherwise; v holds its value either way.
type number struct {
	v     float64
	i     int64
	isInt bool
}

func intNumber(i int64) number     { return number{v: float64(i), i: i, isInt: true} }
func floatNumber(v float64) number { return number{v: v} }

const (
	hintInt64  = "integer constants and shape extents are 64-bit signed integers"
	hintFinite = "constants must be finite numbers"
)

// foldBinary evaluates l sym r (sym one of + - * /). Integers stay exact
// and an integer result past int64 is an error, as are a division by zero
// and a non-finite float result.
func foldBinary(sym string, l, r number) (number, *ir.TypeError) {
	if sym == "/" && r.v == 0 {
		return number{}, arithErr("divide by a non-zero constant", "division by zero: %s / %s", l, r)
	}
	if l.isInt && r.isInt {
		if n, ok := foldInt(sym, l.i, r.i); ok {
			return n, nil
		}
		if sym != "/" {
			return number{}, arithErr(hintInt64, "%s %s %s overflows int64", l, sym, r)
		}
	}
	var v float64
	switch sym {
	case "+":
		v = l.v + r.v
	case "-":
		v = l.v - r.v
	case "*":
		v = l.v * r.v
	case "/":
		v = l.v / r.v
	}
	return checkFinite(v, hintFinite, "%s %s %s is %g", l, sym, r, v)
}

// foldInt evaluates an integer operation; false when the result is not an
// int64 (an overflow, or a division with a remainder, which is a float).
func foldInt(sym string, l, r int64) (number, bool) {
	var v int64
	ok := true
	switch sym {
	case "+":
		v, ok = intmath.Add(l, r)
	case "-":
		v, ok = intmath.Sub(l, r)
	case "*":
		v, ok = intmath.Mul(l, r)
	case "/":
		ok = l%r == 0 && !(l == math.MinInt64 && r == -1)
		if ok {
			v = l / r
		}
	}
	return intNumber(v), ok
}

// negate returns −x.
func negate(x number) (number, *ir.TypeError) {
	if !x.isInt {
		return floatNumber(-x.v), nil
	}
	v, ok := intmath.Sub(0, x.i)
	if !ok {
		return number{}, arithErr(hintInt64, "-(%s) overflows int64", x)
	}
	return intNumber(v), nil
}

// checkFinite returns v as a float number, or the error when v is NaN or
// ±Inf.
func checkFinite(v float64, hint, format string, args ...any) (number, *ir.TypeError) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return number{}, arithErr(hint, format, args...)
	}
	return floatNumber(v), nil
}

func (n number) String() string {
	if n.isInt {
		return strconv.FormatInt(n.i, 10)
	}
	return strconv.FormatFloat(n.v, 'g', -1, 64)
}

// arithErr is the error of a constant's arithmetic, with its hint.
func arithErr(hint, format string, args ...any) *ir.TypeError {
	return &ir.TypeError{Msg: fmt.Sprintf(format, args...), Hint: hint}
}
