package passes_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
)

// varlenForms are attention over packed queries (the varlen layer's
// scores and softmax, over a ragged or paged cache) and the forms the
// varlen kernel does not compute, with the reason the log must give.
var varlenForms = []struct {
	name, file, decls, score, variant, explain string
}{
	{name: "ragged", file: "../../../specs/testlayers/varlen/small_ragged.fu", variant: "scale=0.353553 causal varlen"},
	{name: "paged_window", file: "paged.fu.tmpl", score: "window(q @ transpose(K) / sqrt(Dh), 3)", variant: "scale=0.353553 causal window=3 varlen"},
	{name: "paged_softcap", file: "paged.fu.tmpl", score: "causal(softcap(q @ transpose(K) * 0.25, 2))", variant: "scale=0.25 causal softcap=2 varlen"},
	{name: "refused_bias", file: "paged.fu.tmpl", decls: "input kb : f32[T + N]", score: "causal(q @ transpose(K) / sqrt(Dh) + kb)", explain: "the varlen attention kernel takes no bias"},
}

// TestAttentionVarlen runs the passes up to attention (canonicalize,
// attention) and checks that the scores, mask and softmax
// over the pairing matmuls became one varlen attention node, or were
// refused with the reason (and that the tensor-core kernels refuse the
// node), and that the graph they leave computes what the
// written one does (odd sizes, empty and one-token sequences), to 1e-12.
func TestAttentionVarlen(t *testing.T) {
	var front []passes.Pass
	for _, name := range []string{"canonicalize", "attention"} {
		p, ok := passes.Lookup(name)
		if !ok {
			t.Fatalf("no pass %s", name)
		}
		front = append(front, p)
	}
	for i, f := range varlenForms {
		t.Run(f.name, func(t *testing.T) {
			g := varlenGraph(t, f.file, f.decls, f.score)
			st, err := passes.Run(g, front, passes.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var variants []string
			for _, n := range st.Graph.Nodes {
				if n.Op == ir.OpAttention {
					variants = append(variants, n.Attr.Attn.String())
					if err := codegen.FlashAttention(n); err == nil || !strings.Contains(err.Error(), "packed queries (varlen)") {
						t.Errorf("codegen.FlashAttention of %s: %v, want the tensor-core kernels to refuse packed queries", n, err)
					}
				}
			}
			if f.variant == "" {
				if len(variants) != 0 || !logHas(st, f.explain) {
					t.Errorf("attention nodes %q, want none and a log naming %q:\n%s", variants, f.explain, logText(st))
				}
			} else if len(variants) != 1 || variants[0] != f.variant {
				t.Errorf("attention nodes %q, want one %q:\n%s", variants, f.variant, logText(st))
			}
			for _, dims := range []map[string]int64{{"B": 4, "N": 9, "T": 5}, {"B": 3, "N": 1, "T": 0}, {"B": 5, "N": 13, "T": 7}} {
				if err := graphsAgree(g, st.Graph, dims, int64(i)); err != nil {
					t.Errorf("%v: %v", dims, err)
				}
			}
		})
	}
}

// varlenGraph builds a varlen spec: a file of testdata/varlen, its
// declarations {{decls}} and scores {{score}} replaced.
func varlenGraph(t *testing.T, file, decls, score string) *ir.Graph {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "varlen", file))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.NewReplacer("{{decls}}", decls, "{{score}}", score).Replace(string(text))
	g, err := frontend.Parse(filepath.Base(file), src)
	if err != nil {
		t.Fatalf("does not build: %v\n%s", err, src)
	}
	return g
}

// graphsAgree runs the written graph g and the graph the passes left, h,
// on the same random inputs and compares outputs and states to 1e-12.
func graphsAgree(g, h *ir.Graph, dims map[string]int64, seed int64) error {
	full, _, err := interp.DeriveDims(g, dims)
	if err != nil {
		return err
	}
	in, err := interp.RandomInputs(g, full, seed)
	if err != nil {
		return err
	}
	want, err := interp.Run(g, full, in, interp.Options{})
	if err != nil {
		return fmt.Errorf("written graph: %w", err)
	}
	got, err := interp.Run(h, full, in, interp.Options{})
	if err != nil {
		return fmt.Errorf("graph after the passes: %w", err)
	}
	return sameResults(got, want)
}
