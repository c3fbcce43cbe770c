package cuda

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/plan"
)

// keysTSpec is attention over keys stored transposed, kt [B, G, Dh, T],
// 8 query heads over 2 kv heads, of dtype dt and head dim dh.
func keysTSpec(dt string, dh int) string {
	return fmt.Sprintf(`
layer keyst_%[1]s_%[2]d
dim B, S, T
const H = 8, G = 2, Dh = %[2]d
input  q  : %[1]s[B, H, S, Dh]
state  kt : %[1]s[B, G, Dh, T]
state  vm : %[1]s[B, G, T, Dh]
output o  : %[1]s[B, H, S, Dh]
o = softmax(causal(q @ kt / sqrt(Dh)), axis=-1) @ vm
`, dt, dh)
}

// keysTConfigs plans keysTSpec for the H200 at bf16 and f16, head dims 64,
// 128 and 256, at a decode step (S = 1 over 333 keys) and a prefill (S =
// 201 over 301 keys).
func keysTConfigs(t testing.TB) []testConfig {
	var out []testConfig
	for _, dt := range []string{"bf16", "f16"} {
		for _, dh := range []int{64, 128, 256} {
			g, err := frontend.Parse("keyst.fu", keysTSpec(dt, dh))
			if err != nil {
				t.Fatal(err)
			}
			for _, dims := range []map[string]int64{{"B": 3, "S": 1, "T": 333}, {"B": 2, "S": 201, "T": 301}} {
				out = append(out, planConfig(t, fmt.Sprintf("keyst_%s_%d", dt, dh), g, dims, plan.H200, "fused", false))
			}
		}
	}
	return out
}

// TestKeysTransposedSIMT checks that attention over keys stored transposed
// plans the CUDA-core kernel (the tensor-core kernels stage keys as rows:
// codegen.FlashAttention refuses them, and the launch pass routes them) at
// decode and prefill, and that its context reads K as stored: KTRANS and
// the offset kdo of a key's dim d, the head dim's stride of kt (T).
func TestKeysTransposedSIMT(t *testing.T) {
	for _, c := range keysTConfigs(t) {
		var k *plan.Kernel
		for _, kk := range c.plan_.Kernels {
			if kk.Strategy == plan.Attention {
				k = kk
			}
		}
		if k == nil {
			t.Fatalf("%s: no attention kernel:\n%s", c, c.plan_)
		}
		if v := k.Launch.Variant; v != plan.VariantDecodeSIMT && v != plan.VariantPrefillSIMT {
			t.Errorf("%s: attention over keys stored transposed launches %s, want the CUDA-core kernel", c, v)
		}
		m, err := Generate(c.plan_)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		for _, want := range []string{"static constexpr bool KTRANS = true;", "kdo(int d) const { return (d*dim_T); }"} {
			if !strings.Contains(m.Source, want) {
				t.Errorf("%s: the kernel source lacks %q", c, want)
			}
		}
	}
}
