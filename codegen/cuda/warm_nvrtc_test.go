//go:build nvrtc

package cuda

import (
	"regexp"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen/nvrtc"
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
	for _, spec := range []string{"llama3_8b", "mixtral_moe"} {
		c := findConfig(t, spec, "fused", 3)
		m, err := Generate(c.plan_)
		if err != nil {
			t.Fatal(err)
		}
		res, err := nvrtc.Compile(m.Source, spec+".cu", plan.H200.Arch)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		ptx := string(res.PTX)
		n := 0
		for _, k := range c.plan_.Kernels {
			l := k.Launch
			if l == nil {
				continue
			}
			var want []*regexp.Regexp
			switch {
			case l.Variant == plan.VariantGemv && l.Splits > 1:
				want = []*regexp.Regexp{regexp.MustCompile(`\bfzb_[0-9a-f]+_ws\b`), regexp.MustCompile(`\bfzb_[0-9a-f]+_count\b`)}
			case l.Variant == plan.VariantDecode:
				want = []*regexp.Regexp{regexp.MustCompile(`\bfz_workspace\b`)}
			default:
				continue
			}
			n++
			body, ok := ptxEntry(ptx, k.Name)
			if !ok {
				t.Errorf("%s: no entry %s in the PTX", c, k.Name)
				continue
			}
			if !warmedBeforeWait(body, want) {
				t.Errorf("%s: %s does not prefetch each of %v before a griddepcontrol.wait", c, k.Name, want)
			}
			if l.Variant == plan.VariantGemv {
				if !strings.Contains(body, "atom.acq_rel.gpu.global.add.u64") {
					t.Errorf("%s: %s: no acq_rel add at the split join", c, k.Name)
				}
				if strings.Contains(body, "fence.sc.") || strings.Contains(body, "membar.gl") {
					t.Errorf("%s: %s: an SC fence in the split GEMV", c, k.Name)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no split GEMV or decode attention to check", c)
		}
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
