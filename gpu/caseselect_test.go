package gpu

import (
	"strings"
	"testing"
)

// TestSelectCases checks the -cases selection: the union of the patterns
// in the cases' order, every case for none, and an error naming each
// pattern that matches no case or does not compile.
func TestSelectCases(t *testing.T) {
	all := Cases(DefaultSeed)
	got, err := SelectCases(all, "")
	if err != nil || len(got) != len(all) {
		t.Fatalf("no patterns: %d of %d cases, %v", len(got), len(all), err)
	}
	got, err = SelectCases(all, " ^mixtral_moe/small/\t^mat_res_bf16_4104x120/  ")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range all {
		if strings.HasPrefix(c.Name(), "mixtral_moe/small/") || strings.HasPrefix(c.Name(), "mat_res_bf16_4104x120/") {
			want = append(want, c.Name())
		}
	}
	if len(want) < 2 || len(got) != len(want) {
		t.Fatalf("two patterns picked %d cases, want %d", len(got), len(want))
	}
	for i, c := range got {
		if c.Name() != want[i] {
			t.Errorf("case %d: %s, want %s", i, c.Name(), want[i])
		}
	}
	_, err = SelectCases(all, "^mixtral_moe/small/ ^tiny/nosuchsize/ ^nosuchspec/")
	if err == nil || !strings.Contains(err.Error(), `"^tiny/nosuchsize/", "^nosuchspec/"`) || strings.Contains(err.Error(), "mixtral") {
		t.Errorf("stale patterns: %v", err)
	}
	if _, err = SelectCases(all, "^mixtral_moe/small/ ^(tiny"); err == nil || !strings.Contains(err.Error(), "pattern 2") {
		t.Errorf("a pattern that does not compile: %v", err)
	}
}
