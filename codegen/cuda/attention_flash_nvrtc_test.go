//go:build nvrtc

package cuda

import (
	"crypto/sha256"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fuser-dev/fuser/plan"
)

// TestFlashNVRTC compiles the attention kernels of every shipped spec and
// every test variant, at every binding, for sm_90a (planned for the H200)
// and sm_80 (planned again for the A100: no wgmma), and fails on a compile
// error or a register spill. -v lists the registers of every entry (the
// most over the bindings).
func TestFlashNVRTC(t *testing.T) {
	type module struct {
		name, src, arch string
		// role names each entry: decode, merge, prefix or prefill.
		role map[string]string
	}
	var mods []module
	seen := map[[32]byte]bool{}
	add := func(cs []flashCase, arch string) {
		for _, c := range cs {
			if len(c.plan.Kernels) == 0 {
				continue
			}
			if arch == plan.A100.Arch {
				_, c.plan, _ = planFlashFor(t, c.graph, c.dims, plan.A100)
			}
			m, err := Generate(c.plan)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			sum := sha256.Sum256([]byte(arch + "\x00" + m.Source))
			if !seen[sum] {
				seen[sum] = true
				role := map[string]string{}
				for _, k := range m.Kernels {
					for v, es := range k.Variants {
						for _, e := range es {
							switch {
							case strings.HasSuffix(e, prefixSuffix):
								role[e] = "prefix"
							case strings.HasSuffix(e, mergeSuffix):
								role[e] = "merge"
							default:
								role[e] = v.String()
							}
						}
					}
				}
				mods = append(mods, module{c.name, m.Source, arch, role})
			}
		}
	}
	for _, arch := range []string{plan.H200.Arch, plan.A100.Arch} {
		add(specFlashCases(t), arch)
		add(flashCases(t), arch)
	}
	var mu sync.Mutex
	regs := map[string]int{}
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, md := range mods {
		wg.Add(1)
		sem <- struct{}{}
		go func(md module) {
			defer wg.Done()
			defer func() { <-sem }()
			arch := md.arch
			res, err := compileOnce(md.src, "attention.cu", arch)
			if err != nil {
				t.Errorf("%s %s: %v", md.name, arch, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if len(res.Kernels) == 0 {
				t.Errorf("%s %s: no ptxas report", md.name, arch)
			}
			for _, r := range res.Kernels {
				if r.Spills() {
					t.Errorf("%s %s: %s spills (%d bytes stores, %d bytes loads, %d registers)", md.name, arch, r.Name, r.SpillStores, r.SpillLoads, r.Registers)
				}
				if r.Serialized {
					t.Errorf("%s %s: ptxas serialized the wgmmas of %s", md.name, arch, r.Name)
				}
				key := arch + " " + strings.SplitN(md.name, "/", 2)[0] + " " + md.role[r.Name]
				regs[key] = max(regs[key], r.Registers)
			}
		}(md)
	}
	wg.Wait()
	if testing.Verbose() {
		var keys []string
		for k := range regs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Logf("%s: %d registers, no spills", k, regs[k])
		}
	}
}
