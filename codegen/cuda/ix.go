package cuda

import (
	"regexp"
	"strconv"
)

// ix is an i64 index expression of generated C code, folded where its parts
// are numbers so that constant shapes give constant strides. f evaluates it
// for bound variables when every part is a number or a plain variable (the
// GEMM epilogue analysis evaluates column expressions this way).
type ix struct {
	s string // the C text, parenthesised unless atomic
	n int64  // the value when known
	k bool   // n is known
	f func(env map[string]int64) (int64, bool)
}

func ixc(n int64) ix {
	return ix{s: intLit(n), n: n, k: true, f: func(map[string]int64) (int64, bool) { return n, true }}
}

// zeroIndex is the index of n zeros.
func zeroIndex(n int) []ix {
	out := make([]ix, n)
	for i := range out {
		out[i] = ixc(0)
	}
	return out
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ixv is a C expression (a variable or an already parenthesised
// expression); a plain variable is evaluated from the environment.
func ixv(s string) ix {
	x := ix{s: s}
	if identRE.MatchString(s) {
		x.f = func(env map[string]int64) (int64, bool) {
			v, ok := env[s]
			return v, ok
		}
	}
	return x
}

// ixp is a dim polynomial.
func ixp(p poly) ix {
	if v, ok := p.value(); ok {
		return ixc(v)
	}
	return ixv(p.c())
}

// eval evaluates x for bound variables.
func (a ix) eval(env map[string]int64) (int64, bool) {
	if a.k {
		return a.n, true
	}
	if a.f == nil {
		return 0, false
	}
	return a.f(env)
}

func (a ix) String() string {
	if a.k && a.n < 0 {
		return "(" + a.s + ")"
	}
	return a.s
}

func (a ix) isConst(n int64) bool { return a.k && a.n == n }

func lift2(a, b ix, op func(x, y int64) (int64, bool)) func(map[string]int64) (int64, bool) {
	if a.f == nil && !a.k || b.f == nil && !b.k {
		return nil
	}
	return func(env map[string]int64) (int64, bool) {
		x, ok := a.eval(env)
		if !ok {
			return 0, false
		}
		y, ok := b.eval(env)
		if !ok {
			return 0, false
		}
		return op(x, y)
	}
}

func withF(x ix, a, b ix, op func(x, y int64) (int64, bool)) ix {
	if !x.k {
		x.f = lift2(a, b, op)
	}
	return x
}

func ixAdd(a, b ix) ix {
	var x ix
	switch {
	case a.k && b.k:
		return ixc(a.n + b.n)
	case a.isConst(0):
		return b
	case b.isConst(0):
		return a
	case b.k && b.n < 0:
		x = ix{s: "(" + a.s + " - " + strconv.FormatInt(-b.n, 10) + ")"}
	default:
		x = ix{s: "(" + a.s + " + " + b.String() + ")"}
	}
	return withF(x, a, b, func(x, y int64) (int64, bool) { return x + y, true })
}

func ixSub(a, b ix) ix {
	switch {
	case a.k && b.k:
		return ixc(a.n - b.n)
	case b.isConst(0):
		return a
	case a.s == b.s:
		return ixc(0)
	}
	return withF(ix{s: "(" + a.String() + " - " + b.String() + ")"}, a, b, func(x, y int64) (int64, bool) { return x - y, true })
}

func ixMul(a, b ix) ix {
	switch {
	case a.k && b.k:
		return ixc(a.n * b.n)
	case a.isConst(0) || b.isConst(0):
		return ixc(0)
	case a.isConst(1):
		return b
	case b.isConst(1):
		return a
	}
	return withF(ix{s: "(" + a.String() + "*" + b.String() + ")"}, a, b, func(x, y int64) (int64, bool) { return x * y, true })
}

func ixDiv(a, b ix) ix {
	switch {
	case a.k && b.k && b.n != 0:
		return ixc(a.n / b.n)
	case a.isConst(0):
		return ixc(0)
	case b.isConst(1):
		return a
	}
	return withF(ix{s: "(" + a.String() + "/" + b.String() + ")"}, a, b, func(x, y int64) (int64, bool) {
		if y == 0 {
			return 0, false
		}
		return x / y, true
	})
}

func ixMod(a, b ix) ix {
	switch {
	case a.k && b.k && b.n != 0:
		return ixc(a.n % b.n)
	case a.isConst(0) || b.isConst(1):
		return ixc(0)
	}
	return withF(ix{s: "(" + a.String() + "%" + b.String() + ")"}, a, b, func(x, y int64) (int64, bool) {
		if y == 0 {
			return 0, false
		}
		return x % y, true
	})
}

// ixMin is min(a, b) for the i64 helpers.
func ixMin(a, b ix) ix {
	if a.k && b.k {
		return ixc(min(a.n, b.n))
	}
	return withF(ix{s: "fz_min64(" + a.s + ", " + b.s + ")"}, a, b, func(x, y int64) (int64, bool) { return min(x, y), true })
}
