package intmath

import (
	"math"
	"math/big"
	"testing"
)

// TestAgainstBig checks every operation against math/big over operands
// around zero and the ends of int64.
func TestAgainstBig(t *testing.T) {
	vals := []int64{0, 1, -1, 2, -2, 3, 1 << 31, -1 << 31, 1 << 32, 3037000499, 3037000500, -3037000500,
		math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1, math.MaxInt64 / 2, math.MinInt64 / 2}
	ops := []struct {
		name string
		fn   func(a, b int64) (int64, bool)
		big  func(z, a, b *big.Int) *big.Int
	}{
		{"+", Add, (*big.Int).Add},
		{"-", Sub, (*big.Int).Sub},
		{"*", Mul, (*big.Int).Mul},
	}
	for _, op := range ops {
		for _, a := range vals {
			for _, b := range vals {
				got, ok := op.fn(a, b)
				want := op.big(new(big.Int), big.NewInt(a), big.NewInt(b))
				if fits := want.IsInt64(); ok != fits || ok && got != want.Int64() {
					t.Errorf("%d %s %d = %d, %v; want %s (fits: %v)", a, op.name, b, got, ok, want, fits)
				}
			}
		}
	}
}
