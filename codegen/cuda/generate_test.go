package cuda

import (
	"regexp"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/internal/golden"
	"github.com/fuser-dev/fuser/plan"
)

// TestGenerateAll generates the module of every spec, fused and unfused,
// at every test binding, and of simtSpecs on CUDA-core attention: it must
// succeed, include no header, hold the device libraries in the listed
// order (every library in some module), and define every entry of every
// kernel once.
func TestGenerateAll(t *testing.T) {
	held := map[string]bool{}
	defer allLibrariesHeld(t, held)
	cfgs := testConfigs(t)
	if !*simtFlag {
		cfgs = append(cfgs, simtConfigs(t)...)
	}
	for _, c := range cfgs {
		m, err := Generate(c.plan_)
		if err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		if strings.Contains(m.Source, "#include") {
			t.Errorf("%s: the source includes a header", c)
		}
		checkLibraries(t, c.String(), m.Source, held)
		if len(m.Kernels) != len(c.plan_.Kernels) {
			t.Errorf("%s: %d kernels for %d in the plan", c, len(m.Kernels), len(c.plan_.Kernels))
		}
		for i, k := range m.Kernels {
			pk := c.plan_.Kernels[i]
			if k.Name != pk.Name || len(k.Entries) == 0 || k.Entries[0] != pk.Name && pk.Strategy != plan.Attention {
				t.Errorf("%s: kernel %d is %q with entries %v", c, i, k.Name, k.Entries)
			}
			want := 1
			if pk.Launch != nil {
				want = pk.Launch.Launches
			}
			if len(k.Entries) != want {
				t.Errorf("%s: kernel %s has entries %v, its launch %d launches", c, k.Name, k.Entries, want)
			}
			for _, e := range k.Entries {
				if n := strings.Count(m.Source, " "+e+"("); n != 1 {
					t.Errorf("%s: entry %s is defined %d times", c, e, n)
				}
			}
			if k.Block <= 0 || k.Hash == "" {
				t.Errorf("%s: kernel %s has block %d, hash %q", c, k.Name, k.Block, k.Hash)
			}
		}
	}
}

// TestDedup checks that identical kernels share one body: the two RMSNorm
// kernels of a Llama layer differ only in their names and buffers.
func TestDedup(t *testing.T) {
	c := findConfig(t, "llama3_8b", "fused", 3)
	m, err := Generate(c.plan_)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kernels[0].Hash != m.Kernels[4].Hash {
		t.Errorf("the RMSNorm kernels have hashes %s and %s", m.Kernels[0].Hash, m.Kernels[4].Hash)
	}
	if n := strings.Count(m.Source, "FZ_DEV void fzb_"+m.Kernels[0].Hash+"("); n != 1 {
		t.Errorf("the shared body is defined %d times", n)
	}
}

// TestDeterministic checks that generating twice gives the same source.
func TestDeterministic(t *testing.T) {
	c := findConfig(t, "paged_decode", "unfused", 3)
	a, err := Generate(c.plan_)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(c.plan_)
	if err != nil {
		t.Fatal(err)
	}
	if a.Source != b.Source {
		t.Error("two generations differ")
	}
}

// TestGolden compares representative kernels of the Llama-3-8B layer with
// testdata: the RMSNorm row kernel, the split GEMV with its RoPE and
// append epilogue, the GEMV with its SwiGLU epilogue; and of a layer over
// packed prompts, the QKV GEMV appending packed tokens and the varlen
// attention, and unfused, the scores pairing each token with its
// sequence's keys and their causal mask (run with -update to accept
// changes). TestFlashGolden holds the decode
// attention kernel.
func TestGolden(t *testing.T) {
	c := findConfig(t, "llama3_8b", "fused", 3)
	m, err := Generate(c.plan_)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ kernel, file string }{
		{"k00_row_mul_mean_add_rsqrt", "rmsnorm.cu"},
		{"k01_gemm_matmul_rope_append", "gemv_split_rope.cu"},
		{"k05_gemm_matmul_silu_mul", "gemv_swiglu.cu"},
	} {
		golden.Check(t, "testdata/"+tc.file, kernelSource(t, m, tc.kernel))
	}
	moe, err := Generate(findConfig(t, "mixtral_moe", "fused", 3).plan_)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/row_topk.cu", kernelSource(t, moe, "k06_row_topk"))
	// Packed prompts: the QKV GEMV's epilogue appends each token at its
	// sequence's position (fz_packed_seq), and the CUDA-core varlen
	// attention takes each sequence's query tiles.
	packed, err := Generate(findVarlen(t, "varlen_small_ragged", "fused", 3).plan_)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/gemv_packed_rope.cu", kernelSource(t, packed, "k01_gemm_matmul_rope_append"))
	golden.Check(t, "testdata/attention_varlen.cu", kernelSource(t, packed, "k02_attention_attention"))
	// Unfused, a token is a unit of the scores' GEMV reading its
	// sequence's keys (fz_packed_seq in the context's b and in the
	// unit's column count), and the mask places it in its sequence.
	unfused, err := Generate(findVarlen(t, "varlen_small_ragged", "unfused", 3).plan_)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/gemv_packed_scores.cu", kernelSource(t, unfused, "k10_gemm_matmul"))
	golden.Check(t, "testdata/row_packed_causal.cu", kernelSource(t, unfused, "k12_row_causal"))
}

// kernelSource extracts a kernel's body functions and entries from a
// module's source.
func kernelSource(t *testing.T, m *Module, name string) string {
	t.Helper()
	start := strings.Index(m.Source, "// body of "+name+"\n")
	if start < 0 {
		t.Fatalf("no body of %s", name)
	}
	rest := m.Source[start+1:]
	end := len(rest)
	for _, marker := range []string{"\n// body of ", "\n// entries"} {
		if i := strings.Index(rest, marker); i >= 0 && i < end {
			end = i
		}
	}
	var entries []string
	re := regexp.MustCompile(`(?m)^extern "C" .* ` + regexp.QuoteMeta(name) + `(_[a-z_]+)?\(.*$`)
	entries = append(entries, re.FindAllString(m.Source, -1)...)
	return m.Source[start:start+1+end] + "\n" + strings.Join(entries, "\n") + "\n"
}

// findConfig returns the test configuration of a spec and plan at S.
func findConfig(t *testing.T, spec, pl string, s int64) testConfig {
	t.Helper()
	for _, c := range testConfigs(t) {
		if c.spec == spec && c.plan == pl && c.dims["S"] == s && c.target.Name == plan.H200.Name {
			return c
		}
	}
	t.Fatalf("no config %s %s S=%d", spec, pl, s)
	return testConfig{}
}

// findVarlen returns the configuration of a varlen layer (varlenConfigs)
// and plan at n tokens.
func findVarlen(t *testing.T, spec, pl string, n int64) testConfig {
	t.Helper()
	for _, c := range varlenConfigs(t) {
		if c.spec == spec && c.plan == pl && c.dims["N"] == n {
			return c
		}
	}
	t.Fatalf("no varlen config %s %s N=%d", spec, pl, n)
	return testConfig{}
}

// TestTimeline checks the timeline module: FZ_TIMELINE defined once after
// the header, every entry bracketed by the probes, and nothing else
// changed (the probes taken out, it is the plain module).
func TestTimeline(t *testing.T) {
	c := findConfig(t, "llama3_8b", "fused", 3)
	plain, err := Generate(c.plan_)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := GenerateWith(c.plan_, Options{Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tl.Source, moduleHeader+"#define FZ_TIMELINE\n") || strings.Count(tl.Source, "#define FZ_TIMELINE") != 1 {
		t.Errorf("the timeline module does not define FZ_TIMELINE once, after the header")
	}
	entries := 0
	for _, k := range tl.Kernels {
		for _, e := range k.Entries {
			entries++
			line := ""
			for _, l := range strings.Split(tl.Source, "\n") {
				if strings.Contains(l, " "+e+"(") {
					line = l
				}
			}
			if !strings.Contains(line, "{ fz_tl_enter();") || !strings.HasSuffix(line, "); fz_tl_exit(); }") {
				t.Errorf("entry %s is not bracketed by the probes: %s", e, line)
			}
		}
	}
	if entries < len(c.plan_.Kernels) {
		t.Errorf("%d entries for %d kernels", entries, len(c.plan_.Kernels))
	}
	back := strings.Replace(tl.Source, "#define FZ_TIMELINE\n", "", 1)
	back = strings.ReplaceAll(back, " fz_tl_enter();", "")
	back = strings.ReplaceAll(back, " fz_tl_exit();", "")
	if back != plain.Source {
		t.Errorf("the timeline module differs from the plain one beyond its probes")
	}
}
