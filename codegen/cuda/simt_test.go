package cuda

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/plan"
)

// TestSIMTAttention: the option replaces the tensor-core flash attention
// kernel (the fz_att_decode and fz_att_prefill templates) with the
// CUDA-core one, in decode and prefill, and leaves the other kernels as
// they are.
func TestSIMTAttention(t *testing.T) {
	for _, s := range []int64{3, 40} {
		c := findConfig(t, "llama3_8b", "fused", s)
		flash, err := Generate(c.plan_)
		if err != nil {
			t.Fatal(err)
		}
		simt, err := Generate(c.plan_, SIMTAttention())
		if err != nil {
			t.Fatal(err)
		}
		for _, tmpl := range []string{"fz_att_decode<", "fz_att_prefill<"} {
			if !strings.Contains(flash.Source, tmpl) || strings.Contains(simt.Source, tmpl) {
				t.Errorf("S=%d: %s instantiated by default: %v, with SIMT attention: %v",
					s, tmpl, strings.Contains(flash.Source, tmpl), strings.Contains(simt.Source, tmpl))
			}
		}
		if len(flash.Kernels) != len(simt.Kernels) {
			t.Fatalf("S=%d: %d kernels, %d with SIMT attention", s, len(flash.Kernels), len(simt.Kernels))
		}
		for i, k := range flash.Kernels {
			attention := c.plan_.Kernels[i].Strategy == plan.Attention
			if same := k.Hash == simt.Kernels[i].Hash; same == attention {
				t.Errorf("S=%d: kernel %s has the same body with SIMT attention: %v", s, k.Name, same)
			}
		}
	}
}
