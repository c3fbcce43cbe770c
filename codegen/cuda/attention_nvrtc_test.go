//go:build nvrtc

package cuda

import (
	"slices"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/plan"
)

// TestSIMTAttentionNVRTC compiles the CUDA-core attention kernels of
// simtConfigs, keysTConfigs (keys stored transposed, on CUDA cores) and
// varlenConfigs (packed queries) for sm_90a: no spills, and every global
// load of their decode, prefill and varlen entries non-coherent
// (ld.global.nc), which NVRTC derives from the parameters' __restrict__
// only while every function the templates of device/attention_simt.cuh
// give the context reads one of its fields.
func TestSIMTAttentionNVRTC(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range slices.Concat(simtConfigs(t), keysTConfigs(t, true), varlenConfigs(t)) {
		p := *c.plan_
		p.Kernels = nil
		for _, k := range c.plan_.Kernels {
			if k.Strategy == plan.Attention {
				p.Kernels = append(p.Kernels, k)
			}
		}
		m, err := Generate(&p)
		if err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		if seen[m.Source] {
			continue
		}
		seen[m.Source] = true
		res, err := compileOnce(m.Source, c.spec+".cu", plan.H200.Arch)
		if err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		for _, k := range res.Kernels {
			if k.Spills() {
				t.Errorf("%s: %s spills (%d bytes stores, %d bytes loads)", c, k.Name, k.SpillStores, k.SpillLoads)
			}
			if strings.HasSuffix(k.Name, mergeSuffix) {
				continue // the merge reads the partials the decode wrote
			}
			body, ok := ptxEntry(string(res.PTX), k.Name)
			if !ok {
				t.Errorf("%s: no entry %s in the PTX", c, k.Name)
			}
			for _, l := range strings.Split(body, "\n") {
				if l = strings.TrimSpace(l); strings.HasPrefix(l, "ld.global.") && !strings.HasPrefix(l, "ld.global.nc.") {
					t.Errorf("%s: %s reads global memory through the coherent path: %s", c, k.Name, l)
				}
			}
		}
	}
}

// ptxEntry is the body of entry name in ptx, from its .entry line to the
// next top-level directive (not the first closing brace at the start of a
// line: inline asm blocks, the wgmma's among them, close there too), and
// whether ptx has the entry.
func ptxEntry(ptx, name string) (string, bool) {
	_, body, ok := strings.Cut(ptx, ".entry "+name+"(")
	for _, next := range []string{"\n.visible ", "\n.entry ", "\n.func ", "\n.weak ", "\n.global ", "\n.extern "} {
		if i := strings.Index(body, next); i >= 0 {
			body = body[:i]
		}
	}
	return body, ok
}
