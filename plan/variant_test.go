package plan

import (
	"encoding/json"
	"testing"
)

// TestVariantText checks that every variant's name reads back as the
// variant (plan JSON), and that the names are the plans' words.
func TestVariantText(t *testing.T) {
	for v := Variant(0); v < numVariants; v++ {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back Variant
		if err := json.Unmarshal(b, &back); err != nil || back != v {
			t.Errorf("%s: JSON %s reads back as %s (%v)", v, b, back, err)
		}
	}
	if VariantDecode.String() != "decode" || VariantGemv.String() != "gemv" || VariantDecodeSIMT.String() != "decode-simt" {
		t.Errorf("variant names changed: %s %s %s", VariantDecode, VariantGemv, VariantDecodeSIMT)
	}
	if _, err := json.Marshal(numVariants); err == nil {
		t.Error("an unknown variant marshals")
	}
}

// TestLookupTarget checks the target names and architectures.
func TestLookupTarget(t *testing.T) {
	for name, want := range map[string]Target{"h200": H200, "H100": H100, "a100": A100, "sm_90a": H200, "sm_80": A100} {
		got, err := LookupTarget(name)
		if err != nil || got != want {
			t.Errorf("LookupTarget(%q) = %s, %v; want %s", name, got.Name, err, want.Name)
		}
		if err := got.Verify(); err != nil {
			t.Error(err)
		}
	}
	if _, err := LookupTarget("sm_70"); err == nil {
		t.Error("sm_70 is not a described target")
	}
}
