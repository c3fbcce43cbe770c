// Package intmath is int64 arithmetic that reports overflow instead of
// wrapping: the checker's constants and shapes, and dims at their bindings.
package intmath

import "math"

// Add returns a + b, and false when the sum overflows int64.
func Add(a, b int64) (int64, bool) {
	s := a + b
	return s, (a^s)&(b^s) >= 0
}

// Sub returns a − b, and false when the difference overflows int64.
func Sub(a, b int64) (int64, bool) {
	d := a - b
	return d, (a^b)&(a^d) >= 0
}

// Mul returns a · b, and false when the product overflows int64.
func Mul(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return p, false
	}
	return p, p/b == a
}
