//go:build nvrtc

package cuda

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/plan"
)

// TestMergeLoadsNVRTC compiles the Llama-3-8B and Gemma-2 (head dim 256)
// modules for sm_90a and checks, in the decode attention's PTX, that the
// split merge reads partials only in batches of 16 slots (their (m, l) and
// four output elements: three ld.global.cg.v2 each, which only the merge
// issues) before it exponentiates any: every run of such loads with no ex2
// between them is at least 48 long. The merge before, an unrolled loop
// over the runtime slot count, compiled to a slot's loads and then its
// merge, runs of 3, and fails here in both modules.
func TestMergeLoadsNVRTC(t *testing.T) {
	for _, spec := range []string{"llama3_8b", "gemma2"} {
		decode := func(l *plan.Launch) bool { return l.Variant == plan.VariantDecode }
		fusedEntries(t, spec, decode, func(c testConfig, k *plan.Kernel, body string) {
			runs := mergeLoadRuns(body)
			if len(runs) == 0 {
				t.Errorf("%s: %s: no merge loads in the PTX", c, k.Name)
			}
			short, least := 0, 48
			for _, run := range runs {
				if run < 48 {
					short++
					least = min(least, run)
				}
			}
			if short > 0 {
				t.Errorf("%s: %s: %d of the merge's %d runs of partial loads end at an ex2 before 48 loads, the shortest after %d", c, k.Name, short, len(runs), least)
			}
		})
	}
}

// mergeLoadRuns is the lengths of the runs of ld.global.cg.v2.f32
// instructions in a PTX body with no ex2 between them.
func mergeLoadRuns(body string) []int {
	var runs []int
	run := 0
	end := func() {
		if run > 0 {
			runs = append(runs, run)
		}
		run = 0
	}
	for _, l := range strings.Split(body, "\n") {
		switch l = strings.TrimSpace(l); {
		case strings.HasPrefix(l, "ld.global.cg.v2.f32"):
			run++
		case strings.HasPrefix(l, "ex2."):
			end()
		}
	}
	end()
	return runs
}
