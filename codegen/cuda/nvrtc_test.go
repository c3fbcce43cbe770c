//go:build nvrtc

package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var nvrtcSpecs = flag.String("nvrtc.specs", "", "comma-separated specs TestNVRTC compiles (default: all)")

var nvrtcAll = flag.Bool("nvrtc.all", false, "compile every spec at every test binding (default: every spec at the first, the prefill binding for a few)")

// nvrtcPrefill are the specs compiled at the prefill binding by default:
// tensor-core GEMMs, and attention at head dims 128, 256, 64 and 4.
var nvrtcPrefill = map[string]bool{"llama3_8b": true, "gemma2_softcap": true, "paged_decode": true, "tiny": true}

var nvrtcArchs = flag.String("nvrtc.archs", "sm_90a,sm_80", "architectures TestNVRTC compiles for")

var cubinDir = flag.String("cubin.dir", "", "write the sm_90a cubin of every compiled module here, named by the SHA-256 of its source (for the GPU test)")

var (
	entryRE = regexp.MustCompile(`Compiling entry function '([^']+)'`)
	spillRE = regexp.MustCompile(`(\d+) bytes spill stores, (\d+) bytes spill loads`)
	regsRE  = regexp.MustCompile(`Used (\d+) registers`)
)

// kernelReport is one entry's ptxas report.
type kernelReport struct {
	name                string
	regs, spillSt, spLd int
}

func parseReport(log string) []kernelReport {
	var out []kernelReport
	var cur *kernelReport
	for _, line := range regexp.MustCompile("\n").Split(log, -1) {
		if m := entryRE.FindStringSubmatch(line); m != nil {
			out = append(out, kernelReport{name: m[1]})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			continue
		}
		if m := spillRE.FindStringSubmatch(line); m != nil {
			cur.spillSt, _ = strconv.Atoi(m[1])
			cur.spLd, _ = strconv.Atoi(m[2])
		}
		if m := regsRE.FindStringSubmatch(line); m != nil {
			cur.regs, _ = strconv.Atoi(m[1])
		}
	}
	return out
}

// TestNVRTC compiles the module of every spec, fused and unfused, at every
// test binding, for sm_90a and sm_80, and fails on any compile error or
// register spill.
func TestNVRTC(t *testing.T) {
	cfgs := testConfigs(t)
	var mu sync.Mutex
	maxRegs := map[string]int{}
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	seen := map[[32]byte]bool{}
	for _, c := range cfgs {
		if *nvrtcSpecs != "" && !strings.Contains(","+*nvrtcSpecs+",", ","+c.spec+",") {
			continue
		}
		if !*nvrtcAll && *dimsFlag == "" && c.dims["S"] != testDims[0]["S"] && !nvrtcPrefill[c.spec] {
			continue
		}
		m, err := Generate(c.plan_)
		if err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		sum := sha256.Sum256([]byte(m.Source))
		if seen[sum] {
			continue // an identical module was compiled already
		}
		if *cubinDir != "" {
			if _, err := os.Stat(filepath.Join(*cubinDir, hex.EncodeToString(sum[:])+".cubin")); err == nil {
				continue
			}
		}
		seen[sum] = true
		for _, arch := range strings.Split(*nvrtcArchs, ",") {
			wg.Add(1)
			sem <- struct{}{}
			go func(c testConfig, arch string) {
				defer wg.Done()
				defer func() { <-sem }()
				log, cubin, err := compileNVRTC(m.Source, c.spec+".cu", arch)
				if err != nil {
					t.Errorf("%s %s: %v\n%s", c, arch, err, log)
					return
				}
				reps := parseReport(log)
				if len(reps) == 0 {
					t.Errorf("%s %s: no ptxas report", c, arch)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, r := range reps {
					if r.spillSt != 0 || r.spLd != 0 {
						t.Errorf("%s %s: %s spills (%d bytes stores, %d bytes loads, %d registers)", c, arch, r.name, r.spillSt, r.spLd, r.regs)
					}
					key := arch + " " + r.name
					maxRegs[key] = max(maxRegs[key], r.regs)
				}
				if *cubinDir != "" && arch == "sm_90a" {
					if err := os.WriteFile(filepath.Join(*cubinDir, hex.EncodeToString(sum[:])+".cubin"), cubin, 0o644); err != nil {
						t.Error(err)
					}
				}
			}(c, arch)
		}
	}
	wg.Wait()
	if testing.Verbose() {
		for k, v := range maxRegs {
			t.Logf("%s: %d registers", k, v)
		}
	}
}
