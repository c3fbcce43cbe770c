package passes_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/internal/golden"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/specs"
	"github.com/fuser-dev/fuser/specs/testlayers"
)

// specDims binds every dim any shipped spec declares.
var specDims = map[string]int64{"B": 2, "S": 3, "T": 17, "P": 64, "N": 64, "L": 9}

func load(t *testing.T, name string) *ir.Graph {
	t.Helper()
	file, src, ok := specs.Source(name)
	if !ok {
		t.Fatalf("no spec %s", name)
	}
	g, err := frontend.Parse(file, src)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// varlenDims are the dims the varlen specs are planned at, their page-pool
// dims derived: 123 tokens of 5 prompts, no query tile a multiple.
var varlenDims = map[string]int64{"B": 5, "N": 123, "T": 40}

// planSpec is a spec TestPlans plans: its graph, dims and golden files'
// stem under testdata.
type planSpec struct {
	g      *ir.Graph
	dims   map[string]int64
	golden string
}

// planSpecs are the shipped specs and the layers over packed prompts of
// different lengths (testlayers.VarlenNames, their goldens under
// testdata/varlen), by subtest name.
func planSpecs(t *testing.T) map[string]planSpec {
	t.Helper()
	out := map[string]planSpec{}
	for _, name := range specs.Names() {
		out[name] = planSpec{load(t, name), specDims, name}
	}
	for _, name := range testlayers.VarlenNames() {
		g, err := testlayers.Varlen(name)
		if err != nil {
			t.Fatal(err)
		}
		dims, _, err := interp.DeriveDims(g, varlenDims)
		if err != nil {
			t.Fatal(err)
		}
		out["varlen/"+name] = planSpec{g, dims, "varlen/" + name}
	}
	return out
}

// TestPlans plans every spec (planSpecs) fused and unfused and compares
// the plans and the fusion log with golden files.
func TestPlans(t *testing.T) {
	for name, sp := range planSpecs(t) {
		t.Run(name, func(t *testing.T) {
			for _, side := range []struct {
				name     string
				pipeline []passes.Pass
			}{{"fused", passes.Fused}, {"unfused", passes.Unfused}} {
				st, err := passes.Run(sp.g, side.pipeline, passes.Options{Dims: sp.dims})
				if err != nil {
					t.Fatal(err)
				}
				if err := st.Plan.Verify(); err != nil {
					t.Fatal(err)
				}
				out := st.Plan.String()
				if side.name == "fused" {
					var log []string
					for _, d := range st.Log {
						log = append(log, d.String())
					}
					out += "explain:\n" + strings.Join(log, "\n") + "\n"
				}
				golden.Check(t, filepath.Join("testdata", sp.golden+"."+side.name), out)
			}
		})
	}
}

// TestAttentionFires checks that the attention pass recognises every
// written attention variant, with the variant it implies.
func TestAttentionFires(t *testing.T) {
	want := map[string]string{
		"llama3_8b":       "scale=0.0883883 causal",
		"attn_decomposed": "scale=0.0883883 causal",
		"attn_scale_q":    "scale=0.0883883 causal",
		"attn_fn":         "scale=0.0883883 causal",
		"mistral_swa":     "scale=0.0883883 causal window=4096",
		"gemma2_softcap":  "scale=0.0625 causal softcap=50",
		"gemma2":          "scale=0.0625 causal window=4096 softcap=50",
		"gpt2":            "scale=0.125 causal",
		"llama3_70b":      "scale=0.0883883 causal",
		"cascade":         "scale=0.0883883 causal cascade",
		"paged_decode":    "scale=0.125 causal",
		"mixtral_moe":     "scale=0.0883883 causal",
		"qwen_bias":       "scale=0.0883883 causal",
		"tiny":            "scale=0.5 causal",
	}
	if len(want) != len(specs.Names()) {
		t.Fatalf("test covers %d specs, there are %d", len(want), len(specs.Names()))
	}
	for name, variant := range want {
		t.Run(name, func(t *testing.T) {
			st, err := passes.Run(load(t, name), passes.Fused, passes.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := attentionVariants(st)
			if len(got) != 1 || got[0] != variant {
				t.Errorf("attention nodes %q, want one %q", got, variant)
			}
		})
	}
}

// TestPagedKeysRagged checks that paged KV reaches attention with
// per-sequence lengths, so the kernel gathers pages and masks past them.
func TestPagedKeysRagged(t *testing.T) {
	st, err := passes.Run(load(t, "paged_decode"), passes.Fused, passes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range st.Graph.Nodes {
		if n.Op == ir.OpAttention {
			if k := n.Args[1]; k.Ragged == nil || k.Ragged.Axis != 2 {
				t.Fatalf("paged keys %s carry no per-sequence length", k.Ref())
			}
			return
		}
	}
	t.Fatal("no attention node")
}

// TestNotFusedExplained checks that a blocked fusion is explained.
func TestNotFusedExplained(t *testing.T) {
	src := `layer blocked
dim B
const D = 64
input x : bf16[B, D]
param w1 : bf16[D, D]
param w2 : bf16[D, D]
output y : bf16[B, D]
a = x @ w1
y = a + a @ w2
`
	g, err := frontend.Parse("blocked.fu", src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := passes.Run(g, passes.Fused, passes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	for _, d := range st.Log {
		log = append(log, d.String())
	}
	text := strings.Join(log, "\n")
	for _, want := range []string{
		"not fused matmul %4.a → matmul",
		"fused     matmul %5 ← add %6.y (epilogue)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
}

// attentionVariants lists the variants of the graph's attention nodes.
func attentionVariants(st *passes.State) []string {
	var got []string
	for _, n := range st.Graph.Nodes {
		if n.Op == ir.OpAttention {
			got = append(got, n.Attr.Attn.String())
		}
	}
	return got
}
