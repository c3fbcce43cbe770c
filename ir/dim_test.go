package ir

import (
	"errors"
	"testing"
)

func TestDimTermsRoundTrip(t *testing.T) {
	d := Sym("T").Add(Sym("S")).Mul(Const(2)).Sub(Const(1)) // 2*S + 2*T - 1
	terms := d.Terms()
	terms["S"] = 5 // a copy: d is unchanged
	if got := d.String(); got != "2*S + 2*T - 1" {
		t.Fatalf("d = %s", got)
	}
	if e := DimOfTerms(d.Terms()); !e.Equal(d) {
		t.Errorf("DimOfTerms(d.Terms()) = %s, want %s", e, d)
	}
	if e := DimOfTerms(map[string]int64{"B": 0, "": 3}); !e.Equal(Const(3)) {
		t.Errorf("zero coefficients must drop: got %s", e)
	}
}

func TestDimOverflow(t *testing.T) {
	const maxInt = 1<<63 - 1
	big := Const(maxInt)
	for _, tc := range []struct {
		name string
		fn   func() (Dim, error)
	}{
		{"add", func() (Dim, error) { return big.AddChecked(Const(1)) }},
		{"sub", func() (Dim, error) { return Const(-2).SubChecked(big) }},
		{"mul", func() (Dim, error) { return big.MulChecked(Const(2)) }},
		{"mul of symbols", func() (Dim, error) { return Sym("B").Mul(big).MulChecked(Sym("T").Mul(Const(2))) }},
		{"negation of the smallest", func() (Dim, error) { return Const(0).SubChecked(Const(-maxInt - 1)) }},
	} {
		if d, err := tc.fn(); err != ErrOverflow {
			t.Errorf("%s: got %s, %v; want ErrOverflow", tc.name, d, err)
		}
	}
	if d, err := big.AddChecked(Const(-1)); err != nil || d.String() != "9223372036854775806" {
		t.Errorf("in range: got %s, %v", d, err)
	}
	if _, err := Sym("B").Mul(Const(1 << 40)).Eval(map[string]int64{"B": 1 << 30}); !errors.Is(err, ErrOverflow) {
		t.Errorf("Eval past int64: %v", err)
	}
	if got := Const(-maxInt - 1).String(); got != "-9223372036854775808" {
		t.Errorf("the smallest int64 prints as %s", got)
	}
	if _, err := (Type{DType: BF16, Shape: Shape{Const(1 << 62)}}).Bytes(); err != ErrOverflow {
		t.Errorf("2^62 bf16 elements: %v, want ErrOverflow", err)
	}
}
