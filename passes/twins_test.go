package passes_test

import (
	"os"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/specs"
	"github.com/fuser-dev/fuser/traffic"
)

// decode is a decode step over a 4096-token cache.
var decode = map[string]int64{"B": 1, "S": 1, "T": 4096}

// TestSeparateWeightsPlanAsJoined: the specs written with separate q, k, v
// and gate, up weights, as checkpoints ship them, plan to the step kernels
// of their twins with the weights joined, kernel for kernel (strategy and
// ops), and move within 1.01x of the floor at decode.
func TestSeparateWeightsPlanAsJoined(t *testing.T) {
	joined70 := strings.Replace(mustSource(t, "llama3_8b"), "const D = 4096, H = 32, G = 8, Dh = 128, F = 14336,", "const D = 8192, H = 64, G = 8, Dh = 128, F = 28672,", 1)
	gemma, err := os.ReadFile("testdata/twins/gemma2_joined.fu")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, separate, joined string }{
		{"llama3_70b", mustSource(t, "llama3_70b"), joined70},
		{"gemma2", mustSource(t, "gemma2"), string(gemma)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sep := compare(t, tc.name+".fu", tc.separate)
			twin := compare(t, tc.name+"_joined.fu", tc.joined)
			got, want := stepShape(sep), stepShape(twin)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("step kernels\n%s\nwant the joined twin's\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if r := sep.OverFloor(); r > 1.01 {
				t.Errorf("decode moves %.4fx the floor:\n%s", r, sep.Table())
			}
		})
	}
}

// compare parses src and models both plans at the decode dims.
func compare(t *testing.T, file, src string) *traffic.Report {
	t.Helper()
	g, err := frontend.Parse(file, src)
	if err != nil {
		t.Fatal(err)
	}
	r, err := traffic.Compare(g, decode)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// stepShape names the step's kernels without their index: strategy and
// ops.
func stepShape(r *traffic.Report) []string {
	var out []string
	for _, c := range r.Fused {
		out = append(out, c.Kernel[strings.Index(c.Kernel, "_")+1:])
	}
	return out
}

// TestGemma2Folds: every norm weight's 1 + w is computed once, at load,
// and the step reads it (no add of a param in the step).
func TestGemma2Folds(t *testing.T) {
	r := compare(t, "gemma2.fu", mustSource(t, "gemma2"))
	adds := 0
	for _, k := range r.FusedPlan.Kernels {
		for _, n := range k.Nodes {
			if n.Op == ir.OpAdd && len(n.Outs[0].Type.Shape) == 1 {
				if !k.Load {
					t.Errorf("step kernel %s adds to a norm weight", k.Name)
				}
				adds++
			}
		}
	}
	if adds != 4 || len(r.FusedPlan.Folded()) != 6 {
		t.Errorf("%d norm weights folded and %d folded values, want 4 and 6 (with q/k/v and gate/up joined)", adds, len(r.FusedPlan.Folded()))
	}
}

func mustSource(t *testing.T, name string) string {
	t.Helper()
	_, src, ok := specs.Source(name)
	if !ok {
		t.Fatalf("no spec %s", name)
	}
	return src
}
