//go:build nvrtc

package cuda

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fuser-dev/fuser/internal/golden"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

var nvrtcSpecs = flag.String("nvrtc.specs", "", "comma-separated specs TestNVRTC compiles (default: all)")

var nvrtcAll = flag.Bool("nvrtc.all", false, "compile every spec's fused and unfused plans at every test binding (default: see nvrtcDefault)")

// nvrtcWide are the specs whose fused and unfused plans compile at every
// test binding by default: tensor-core GEMMs, attention at head dims 128,
// 256, 64 and 4, and the unfused plans' single-op kernels; every other
// spec's fused plan compiles at the first binding. (A GEMM kernel takes
// NVRTC several seconds; every plan at every binding is more than make
// test's budget.)
var nvrtcWide = map[string]bool{"llama3_8b": true, "gemma2_softcap": true, "paged_decode": true, "tiny": true}

// nvrtcVarlen are the varlen layers' fused configs (varlenConfigs)
// TestNVRTC compiles by default, by the token count of their binding: the
// f32 ragged layer at a few tokens (the GEMV's packed epilogue), the bf16
// paged one at 123 (the wgmma GEMM's), both with varlen attention. Their
// unfused plans compile at a few tokens: the matmuls pairing tokens with
// their sequences take a unit a token (its GQA group's rows) at any
// count, on CUDA cores (f32) and on tensor cores over a paged cache
// (bf16).
var nvrtcVarlen = map[string]int64{"varlen_small_ragged": 3, "varlen_paged_window": 123}

// nvrtcVarlenUnfused is the token count of the varlen layers' unfused
// configs that TestNVRTC compiles by default.
const nvrtcVarlenUnfused = 3

// nvrtcDefault reports whether TestNVRTC compiles config c without
// -nvrtc.all or -test.dims.
func nvrtcDefault(c testConfig) bool {
	if n, ok := nvrtcVarlen[c.spec]; ok {
		if c.plan == "unfused" {
			n = nvrtcVarlenUnfused
		}
		return c.dims["N"] == n
	}
	return nvrtcWide[c.spec] || portableSpecs[c.spec] || (c.plan == "fused" && c.dims["S"] == testDims[0]["S"])
}

// ptxasGolden is the table of every kernel's registers, shared memory and
// stack, so that changes show in diffs. TestNVRTC checks it when it runs
// its default set (no -nvrtc.* or -test.dims flags); -update rewrites it.
const ptxasGolden = "testdata/ptxas.txt"

// TestNVRTC compiles the modules of every spec (see nvrtcDefault) for
// their target's architecture (sm_90a; sm_80 for portableSpecs' A100
// plans), and fails on any compile error or register spill; the ptxas
// report of every kernel is checked against ptxasGolden (registers within
// ptxasSlack, the rest exactly), which marks the kernels whose wgmmas
// ptxas serialized (the tiny spec's GEMV and GEMM at K = 16 and 24: a new
// one shows in the diff).
func TestNVRTC(t *testing.T) {
	cfgs := testConfigs(t)
	var mu sync.Mutex
	var rows []string
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	seen := map[[32]byte]bool{}
	for _, c := range cfgs {
		if *nvrtcSpecs != "" && !strings.Contains(","+*nvrtcSpecs+",", ","+c.spec+",") {
			continue
		}
		if !*nvrtcAll && *dimsFlag == "" && !nvrtcDefault(c) {
			continue
		}
		m, err := Generate(c.plan_)
		if err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		sum := sha256.Sum256([]byte(c.target.Arch + "\x00" + m.Source))
		if seen[sum] {
			continue // an identical module was compiled for the arch already: its rows are the first config's
		}
		seen[sum] = true
		wg.Add(1)
		sem <- struct{}{}
		go func(c testConfig, arch string) {
			defer wg.Done()
			defer func() { <-sem }()
			res, err := compileOnce(m.Source, c.spec+".cu", arch)
			if err != nil {
				t.Errorf("%s %s: %v", c, arch, err)
				return
			}
			if len(res.Kernels) == 0 {
				t.Errorf("%s %s: no ptxas report", c, arch)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, k := range res.Kernels {
				if k.Spills() {
					t.Errorf("%s %s: %s spills (%d bytes stores, %d bytes loads, %d registers)", c, arch, k.Name, k.SpillStores, k.SpillLoads, k.Registers)
				}
				row := fmt.Sprintf("%-52s %-6s %-40s %4d %6d %4d", c, arch, k.Name, k.Registers, k.SharedBytes, k.StackBytes)
				if k.Serialized {
					row += " serialized"
				}
				rows = append(rows, row)
			}
		}(c, c.target.Arch)
	}
	wg.Wait()
	defaults := *nvrtcSpecs == "" && !*nvrtcAll && *dimsFlag == "" && !*simtFlag
	sort.Strings(rows)
	if !defaults {
		t.Logf("ptxas report (not checked against %s with -nvrtc.* or -test.dims flags):\n%s", ptxasGolden, strings.Join(rows, "\n"))
	}
	if t.Failed() || !defaults {
		return
	}
	header := "# The ptxas report of every generated kernel: module (spec/plan/dims; a module\n" +
		"# identical to an earlier one is listed once), arch, entry, registers per thread,\n" +
		"# static shared memory bytes, stack bytes, and \"serialized\" where ptxas serialized\n" +
		"# the entry's wgmmas (its C7513 advisory). Made by TestNVRTC; to accept a change:\n" +
		"# go test -tags nvrtc ./codegen/cuda -run TestNVRTC -update\n"
	golden.CheckFunc(t, ptxasGolden, header+strings.Join(rows, "\n")+"\n", ptxasEqual)
}

// TestTimelineNVRTC compiles the Llama-3-8B decode step's timeline module
// (Options.Timeline) for sm_90a and sm_80 without spills: the probes
// compile on both, fz_grid_sync's with and without dependent launch.
func TestTimelineNVRTC(t *testing.T) {
	c := findConfig(t, "llama3_8b", "fused", 3)
	m, err := GenerateWith(c.plan_, Options{Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{plan.H200.Arch, plan.A100.Arch} {
		if arch == plan.A100.Arch {
			st, err := passes.Run(c.graph, passes.Fused, passes.Options{Dims: c.dims, Target: plan.A100})
			if err != nil {
				t.Fatal(err)
			}
			if m, err = GenerateWith(st.Plan, Options{Timeline: true}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := compileOnce(m.Source, "timeline.cu", arch)
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		if len(res.Kernels) == 0 {
			t.Errorf("%s: no ptxas report", arch)
		}
		for _, k := range res.Kernels {
			if k.Spills() {
				t.Errorf("%s %s spills (%d bytes stores, %d bytes loads)", arch, k.Name, k.SpillStores, k.SpillLoads)
			}
			if k.Serialized {
				t.Errorf("%s: ptxas serialized the wgmmas of %s", arch, k.Name)
			}
		}
	}
}
