//go:build nvrtc

package cuda

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/plan"
)

// TestSplitEpilogueLoadsNVRTC compiles the Llama-3-8B and Mixtral modules
// for sm_90a and checks, in each split GEMV's PTX, that the epilogue reads
// a batch's partials before it sums any: a run of at least batch × chunk
// ld.global.cg loads (splitEpiShape for one sum an element) with no add
// between them. The code before summed each partial as it arrived, over a
// split count the compiler did not know: its PTX had an add after every
// load, and it fails this test in every split GEMV of both modules
// (bench/results/2026-12-06-split-epilogue).
func TestSplitEpilogueLoadsNVRTC(t *testing.T) {
	for _, spec := range []string{"llama3_8b", "mixtral_moe"} {
		split := func(l *plan.Launch) bool { return l.Variant == plan.VariantGemv && l.Splits > 1 }
		fusedEntries(t, spec, split, func(c testConfig, k *plan.Kernel, body string) {
			b, ch := splitEpiShape(1, k.Launch.Splits)
			if run := loadRun(body); run < b*ch {
				t.Errorf("%s: %s (%d splits) reads at most %d partials before a sum, want %d", c, k.Name, k.Launch.Splits, run, b*ch)
			}
		})
	}
}

// loadRun is the longest run of ld.global.cg.f32 instructions in a PTX
// body with no add.f32 between them.
func loadRun(body string) int64 {
	var run, best int64
	for _, l := range strings.Split(body, "\n") {
		switch l = strings.TrimSpace(l); {
		case strings.HasPrefix(l, "ld.global.cg.f32"):
			run++
			best = max(best, run)
		case strings.HasPrefix(l, "add.f32"):
			run = 0
		}
	}
	return best
}
