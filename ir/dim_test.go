package ir

import "testing"

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
