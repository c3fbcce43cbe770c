//go:build nvrtc

package cuda

import (
	"testing"

	"github.com/fuser-dev/fuser/plan"
)

// fusedEntries compiles spec's fused module (the S=3 test config) for
// sm_90a and calls check with the PTX entry of each of its kernels whose
// launch keep selects; it fails the test where an entry is missing or no
// kernel is selected.
func fusedEntries(t *testing.T, spec string, keep func(*plan.Launch) bool, check func(c testConfig, k *plan.Kernel, body string)) {
	t.Helper()
	c := findConfig(t, spec, "fused", 3)
	m, err := Generate(c.plan_)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compileOnce(m.Source, spec+".cu", plan.H200.Arch)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	n := 0
	for _, k := range c.plan_.Kernels {
		if k.Launch == nil || !keep(k.Launch) {
			continue
		}
		n++
		body, ok := ptxEntry(string(res.PTX), k.Name)
		if !ok {
			t.Errorf("%s: no entry %s in the PTX", c, k.Name)
			continue
		}
		check(c, k, body)
	}
	if n == 0 {
		t.Errorf("%s: no kernel to check", c)
	}
}
