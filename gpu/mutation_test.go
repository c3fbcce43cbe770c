package gpu

import (
	"testing"

	"github.com/fuser-dev/fuser/ir"
)

// TestParseMutation reads mutations and refuses malformed ones, and a
// mutation scales data of each dtype.
func TestParseMutation(t *testing.T) {
	if m, err := ParseMutation(""); m != nil || err != nil {
		t.Errorf("empty: %v, %v; want no mutation", m, err)
	}
	m, err := ParseMutation("k0[0-9]_attention=1.1")
	if err != nil || m.Scale != 1.1 || !m.Kernel.MatchString("k02_attention_attention") || m.Kernel.MatchString("k03_gemm") {
		t.Fatalf("k0[0-9]_attention=1.1: %v, %v", m, err)
	}
	if got := m.String(); got != "k0[0-9]_attention=1.1" {
		t.Errorf("String %q", got)
	}
	if m, err := ParseMutation("a=b=0"); err != nil || m.Kernel.String() != "a=b" || m.Scale != 0 {
		t.Errorf("a=b=0: %v, %v; want a=b scaled by 0 (the last = splits)", m, err)
	}
	for _, bad := range []string{"attention", "attention=", "(=1", "attention=NaN", "attention=Inf", "attention=x"} {
		if m, err := ParseMutation(bad); err == nil || m != nil {
			t.Errorf("%q: %v, %v; want an error", bad, m, err)
		}
	}
	z, _ := ParseMutation("x=0")
	for _, dt := range []ir.DType{ir.BF16, ir.F16, ir.F32, ir.FP8E4M3} {
		data := Encode([]float64{1, -2, 0.5}, dt)
		if got := Decode(m.scaled(data, dt), dt); got[1] >= -2.1 && dt != ir.FP8E4M3 || got[0] <= 1 {
			t.Errorf("%s scaled by 1.1: %v", dt, got)
		}
		if got := Decode(z.scaled(data, dt), dt); got[0] != 0 || got[1] != 0 || got[2] != 0 {
			t.Errorf("%s scaled by 0: %v", dt, got)
		}
	}
}
