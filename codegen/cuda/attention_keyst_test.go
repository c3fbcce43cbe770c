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
// 201 over 301 keys): on the CUDA-core kernels when simt is set, else on
// whichever the launch pass picks.
func keysTConfigs(t testing.TB, simt bool) []testConfig {
	var out []testConfig
	for _, dt := range []string{"bf16", "f16"} {
		for _, dh := range []int{64, 128, 256} {
			g, err := frontend.Parse("keyst.fu", keysTSpec(dt, dh))
			if err != nil {
				t.Fatal(err)
			}
			for _, dims := range []map[string]int64{{"B": 3, "S": 1, "T": 333}, {"B": 2, "S": 201, "T": 301}} {
				out = append(out, planConfig(t, fmt.Sprintf("keyst_%s_%d", dt, dh), g, dims, plan.H200, "fused", simt))
			}
		}
	}
	return out
}

// TestKeysTransposed checks that attention over keys stored transposed
// plans the tensor-core kernels, the decode and the mma.sync prefill (the
// wgmma prefill stages keys as rows: codegen.WGMMAPrefill refuses them,
// and the launch pass routes them), and the CUDA-core kernel when asked,
// and that each kernel's context reads K as stored: KEYST and
// the offset kdo of a key's dim d, the head dim's stride of kt (T).
func TestKeysTransposed(t *testing.T) {
	for _, simt := range []bool{false, true} {
		for _, c := range keysTConfigs(t, simt) {
			var k *plan.Kernel
			for _, kk := range c.plan_.Kernels {
				if kk.Strategy == plan.Attention {
					k = kk
				}
			}
			if k == nil {
				t.Fatalf("%s: no attention kernel:\n%s", c, c.plan_)
			}
			decode := c.dims["S"] == 1
			want := plan.VariantPrefill
			switch {
			case simt && decode:
				want = plan.VariantDecodeSIMT
			case simt:
				want = plan.VariantPrefillSIMT
			case decode:
				want = plan.VariantDecode
			}
			if l := k.Launch; l.Variant != want || l.WGMMA {
				t.Errorf("%s: attention over keys stored transposed launches %s, want %s on mma.sync", c, l, want)
			}
			m, err := Generate(c.plan_)
			if err != nil {
				t.Fatalf("%s: %v", c, err)
			}
			for _, w := range []string{"static constexpr bool KEYST = true;", "kdo(int d) const { return (d*dim_T); }"} {
				if !strings.Contains(m.Source, w) {
					t.Errorf("%s: the kernel source lacks %q", c, w)
				}
			}
		}
	}
}
