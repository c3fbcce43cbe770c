package passes_test

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// siblingHeader declares what every sibling case below reads: an input x,
// param weights of 24 and 40 columns, an output of 80; each case declares
// the third operand it reads, of 16 columns.
const siblingHeader = `layer sib
dim B
const K = 32
input  x  : f32[B, K]
param  w1 : f32[K, 24]
param  w2 : f32[K, 40]
output y  : f32[B, 80]
`

// TestSiblingRewrite: matmuls of one input with param weights (two or
// three, of different widths) join into one GEMM over weights concatenated
// at load, an element-wise op across the parts its epilogue; different
// inputs, an input weight and a transposed weight do not join, and the
// log says why. Every plan computes the written graph to 1e-12, load stage
// included.
func TestSiblingRewrite(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		// gemms and loads are the step's GEMM kernels and the load
		// stage's kernels; refused is what the log must say, if anything.
		gemms, loads int
		refused      string
	}{
		{"three", "param w3 : f32[K, 16]\na = x @ w1\nb = x @ w2\nc = x @ w3\ny = concat(a, b, c, axis=1) * 2", 1, 1, ""},
		{"two", "input z : f32[B, K]\nparam w3 : f32[K, 16]\ny = concat(x @ w1, x @ w2, z @ w3, axis=1)", 2, 1, ""},
		{"different_inputs", "input z : f32[B, K]\nparam w3 : f32[K, 16]\ny = concat(x @ w1, z @ w2, silu(x) @ w3, axis=1)", 3, 0, ""},
		{"input_weight", "input wi : f32[K, 16]\ny = concat(x @ w1, x @ w2, x @ wi, axis=1)", 2, 1, "its weight is computed, not a param"},
		{"output", "param w3 : f32[K, 16]\noutput u : f32[B, 24]\nu = x @ w1\ny = concat(silu(x @ w1), x @ w2, x @ w3, axis=1)", 2, 1, "its result is a graph output"},
		{"transposed", "param wt : f32[16, K]\ny = concat(x @ w1, x @ w2, x @ transpose(wt), axis=1)", 2, 1, "its weight is a transposed view"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := frontend.Parse("sib.fu", siblingHeader+tc.body+"\n")
			if err != nil {
				t.Fatal(err)
			}
			dims := map[string]int64{"B": 3}
			st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims})
			if err != nil {
				t.Fatal(err)
			}
			gemms, loads := 0, 0
			for _, k := range st.Plan.Kernels {
				switch {
				case k.Load:
					loads++
				case k.Strategy == plan.Gemm:
					gemms++
				}
			}
			if gemms != tc.gemms || loads != tc.loads {
				t.Errorf("%d GEMM and %d load kernels, want %d and %d:\n%s", gemms, loads, tc.gemms, tc.loads, st.Plan)
			}
			log := logText(st)
			if tc.refused != "" && !strings.Contains(log, tc.refused) {
				t.Errorf("log lacks %q:\n%s", tc.refused, log)
			}
			if joined := strings.Contains(log, "fused     sibling matmuls"); joined != (tc.loads > 0) {
				t.Errorf("log reports a join: %v, want %v:\n%s", joined, tc.loads > 0, log)
			}
			if err := planEqualsGraph(g, st.Plan, dims, 7); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSiblingSwiGLUEpilogue: silu(x @ wg) * (x @ wu) of separate params is
// one GEMM whose epilogue is the SwiGLU across the halves, as for a joined
// weight.
func TestSiblingSwiGLUEpilogue(t *testing.T) {
	src := `layer swiglu
dim B
input  x  : f32[B, 32]
param  wg : f32[32, 48]
param  wu : f32[32, 48]
output y  : f32[B, 48]
y = silu(x @ wg) * (x @ wu)
`
	g, err := frontend.Parse("swiglu.fu", src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: map[string]int64{"B": 2}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range st.Plan.Kernels {
		names = append(names, k.Name)
	}
	if got := strings.Join(names, " "); got != "k00_copy_concat k01_gemm_matmul_silu_mul" {
		t.Errorf("kernels %s, want the load stage's concat and one GEMM with the SwiGLU epilogue", got)
	}
}
