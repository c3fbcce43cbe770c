package cuda

import (
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
	"github.com/fuser-dev/fuser/specs/testlayers"
)

// testDims are the dim bindings every spec is planned with: decode-like
// (S = 3, GEMV and split-KV paths) and prefill-like (S = 40, tensor-core
// and tiled attention paths). Dims a spec has beyond B, S, T get defaults;
// paged layouts' pool and index counts are derived as the reference
// interpreter does.
var dimsFlag = flag.String("test.dims", "", "dim bindings replacing testDims, e.g. \"B=2,S=1,T=600;B=1,S=64,T=0\"")

var simtFlag = flag.Bool("attn.simt", false, "use the CUDA-core attention kernels")

var testDims = []map[string]int64{
	{"B": 2, "S": 3, "T": 17},
	{"B": 2, "S": 40, "T": 9},
}

// portableSpecs are the specs also planned for the A100 (sm_80: the
// mma.sync tensor-core GEMV, no wgmma or TMA): TestNVRTC compiles those
// plans for sm_80, and the architecture guards of the row, element-wise and
// GEMM kernels with them (TestFlashNVRTC compiles every attention kernel
// for sm_80).
var portableSpecs = map[string]bool{"tiny": true}

// testConfig is one planned spec.
type testConfig struct {
	spec, plan string
	dims       map[string]int64
	// target is the GPU the plan is sized for: plan.H200, or plan.A100
	// for portableSpecs.
	target plan.Target
	graph  *ir.Graph
	plan_  *plan.Plan
}

func (c testConfig) String() string {
	var keys []string
	for k := range c.dims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c.dims[k]))
	}
	s := c.spec + "/" + c.plan + "/" + strings.Join(parts, ",")
	if c.target.Name != plan.H200.Name {
		s += "@" + c.target.Name
	}
	return s
}

// bindDims completes dims for a graph: L defaults to 5, derived page dims.
func bindDims(g *ir.Graph, dims map[string]int64) (map[string]int64, error) {
	d := map[string]int64{}
	for k, v := range dims {
		d[k] = v
	}
	for _, name := range g.Dims {
		if _, ok := d[name]; !ok && name == "L" {
			d[name] = 5
		}
	}
	full, _, err := interp.DeriveDims(g, d)
	if err != nil {
		return nil, err
	}
	for _, name := range g.Dims {
		if _, ok := full[name]; !ok {
			full[name] = 4
		}
	}
	return full, nil
}

// testConfigs plans every spec, fused and unfused, at every testDims.
func testConfigs(t testing.TB) []testConfig {
	var out []testConfig
	for _, name := range specs.Names() {
		g := parseSpec(t, name)
		bindings := testDims
		if *dimsFlag != "" {
			bindings = nil
			for _, b := range strings.Split(*dimsFlag, ";") {
				d := map[string]int64{}
				for _, kv := range strings.Split(b, ",") {
					var v int64
					p := strings.SplitN(kv, "=", 2)
					if len(p) != 2 {
						t.Fatalf("bad -test.dims %q", *dimsFlag)
					}
					if _, err := fmt.Sscan(p[1], &v); err != nil {
						t.Fatalf("bad -test.dims %q: %v", *dimsFlag, err)
					}
					d[p[0]] = v
				}
				bindings = append(bindings, d)
			}
		}
		for _, dims := range bindings {
			full, err := bindDims(g, dims)
			if err != nil {
				t.Fatal(err)
			}
			targets := []plan.Target{plan.H200}
			if portableSpecs[name] {
				targets = append(targets, plan.A100)
			}
			for _, tg := range targets {
				for _, pl := range []string{"fused", "unfused"} {
					out = append(out, planConfig(t, name, g, full, tg, pl, *simtFlag))
				}
			}
		}
	}
	if *dimsFlag == "" {
		out = append(out, varlenConfigs(t)...)
	}
	return out
}

// varlenDims are the bindings the varlen layers are planned at: a few
// tokens over a cache (the GEMV path), and prompts of 123 tokens in all,
// no query tile a multiple (the tensor-core GEMMs).
var varlenDims = []map[string]int64{
	{"B": 3, "N": 3, "T": 17},
	{"B": 5, "N": 123, "T": 40},
}

// varlenConfigs plans the layers over packed prompts
// (testlayers.VarlenNames) fused and unfused at varlenDims: unfused, the
// scores pair each token with its sequence's keys in a matmul, a causal
// mask and a softmax over rows whose lengths vary per token.
func varlenConfigs(t testing.TB) []testConfig {
	var out []testConfig
	for _, name := range testlayers.VarlenNames() {
		g, err := testlayers.Varlen(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, dims := range varlenDims {
			full, err := bindDims(g, dims)
			if err != nil {
				t.Fatal(err)
			}
			for _, pl := range []string{"fused", "unfused"} {
				out = append(out, planConfig(t, "varlen_"+name, g, full, plan.H200, pl, *simtFlag))
			}
		}
	}
	return out
}

// simtSpecs are the specs TestGenerateAll also plans with the CUDA-core
// attention kernels (as -attn.simt plans every spec): GQA over a
// contiguous cache, a cascade, a paged cache, a sliding window, softcap.
var simtSpecs = []string{"tiny", "cascade", "paged_decode", "mistral_swa", "gemma2_softcap"}

// simtConfigs plans simtSpecs fused at every testDims with the CUDA-core
// attention kernels.
func simtConfigs(t testing.TB) []testConfig {
	var out []testConfig
	for _, name := range simtSpecs {
		g := parseSpec(t, name)
		for _, dims := range testDims {
			full, err := bindDims(g, dims)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, planConfig(t, name, g, full, plan.H200, "fused", true))
		}
	}
	return out
}

// parseSpec parses the shipped spec name.
func parseSpec(t testing.TB, name string) *ir.Graph {
	fn, src, ok := specs.Source(name)
	if !ok {
		t.Fatalf("spec %s missing", name)
	}
	g, err := frontend.Parse(fn, src)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// planConfig plans spec g (named name) at the bound dims for target tg:
// pl is "fused" or "unfused"; simt plans the CUDA-core attention kernels.
func planConfig(t testing.TB, name string, g *ir.Graph, dims map[string]int64, tg plan.Target, pl string, simt bool) testConfig {
	pipeline := passes.Fused
	if pl == "unfused" {
		pipeline = passes.Unfused
	}
	st, err := passes.Run(g, pipeline, passes.Options{Dims: dims, Target: tg, SIMTAttention: simt})
	if err != nil {
		t.Fatalf("%s %s %s: %v", name, pl, tg.Name, err)
	}
	return testConfig{spec: name, plan: pl, dims: dims, target: tg, graph: g, plan_: st.Plan}
}
