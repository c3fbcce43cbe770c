//go:build nvrtc

package cuda

import (
	"regexp"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/plan"
)

// TestWarmBeforeWaitNVRTC compiles the Llama-3-8B and Mixtral modules for
// sm_90a and checks, in the PTX, that the split GEMVs and the decode
// attention ask L2 for their module globals before a griddepcontrol.wait
// (after the wait before it, if any): a prefetch.global.L2 whose address
// derives from the global's, for a split GEMV its partials and counters,
// for the attention the workspace. ncu put an imc stall on the first read
// of such an address right after the wait (bench/results/2026-12-06-warm);
// the code before prefetched only weight and key rows there and fails
// here. The split join must be one acq_rel add, with no SC fence in the
// entry.
func TestWarmBeforeWaitNVRTC(t *testing.T) {
	ws, count := regexp.MustCompile(`\bfzb_[0-9a-f]+_ws\b`), regexp.MustCompile(`\bfzb_[0-9a-f]+_count\b`)
	workspace := regexp.MustCompile(`\bfz_workspace\b`)
	for _, spec := range []string{"llama3_8b", "mixtral_moe"} {
		keep := func(l *plan.Launch) bool {
			return l.Variant == plan.VariantGemv && l.Splits > 1 || l.Variant == plan.VariantDecode
		}
		fusedEntries(t, spec, keep, func(c testConfig, k *plan.Kernel, body string) {
			want := []*regexp.Regexp{workspace}
			if k.Launch.Variant == plan.VariantGemv {
				want = []*regexp.Regexp{ws, count}
				if !strings.Contains(body, "atom.acq_rel.gpu.global.add.u64") {
					t.Errorf("%s: %s: no acq_rel add at the split join", c, k.Name)
				}
				if strings.Contains(body, "fence.sc.") || strings.Contains(body, "membar.gl") {
					t.Errorf("%s: %s: an SC fence in the split GEMV", c, k.Name)
				}
			}
			if !warmedBeforeWait(body, want) {
				t.Errorf("%s: %s does not prefetch each of %v before a griddepcontrol.wait", c, k.Name, want)
			}
		})
	}
}

// warmedBeforeWait reports whether some griddepcontrol.wait of a PTX body
// has, between it and the wait before it (or the body's start), a
// prefetch.global.L2 of an address derived from each global of want.
func warmedBeforeWait(body string, want []*regexp.Regexp) bool {
	segs := strings.Split(body, "griddepcontrol.wait;")
	for _, seg := range segs[:len(segs)-1] {
		all := true
		for _, re := range want {
			all = all && prefetches(seg, re)
		}
		if all {
			return true
		}
	}
	return false
}

var ptxReg = regexp.MustCompile(`%[a-z]+[0-9]+`)

// prefetches reports whether a PTX fragment prefetches into L2 an address
// computed from a global that re matches: registers are followed from the
// instruction that names the global through every instruction that reads
// one of them and writes its first operand.
func prefetches(seg string, re *regexp.Regexp) bool {
	from := map[string]bool{}
	for _, l := range strings.Split(seg, "\n") {
		l = strings.TrimSpace(l)
		regs := ptxReg.FindAllString(l, -1)
		if strings.HasPrefix(l, "prefetch.global.L2") {
			for _, r := range regs {
				if from[r] {
					return true
				}
			}
			continue
		}
		if len(regs) == 0 {
			continue
		}
		derived := re.MatchString(l)
		for _, r := range regs[1:] {
			derived = derived || from[r]
		}
		if derived {
			from[regs[0]] = true
		}
	}
	return false
}
