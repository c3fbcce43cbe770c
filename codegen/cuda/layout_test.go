package cuda

import (
	"slices"
	"testing"

	"github.com/fuser-dev/fuser/plan"
)

// TestStoredLayout checks that a value the plan stores permuted is
// addressed through its layout by the kernel writing it and the kernel
// reading it: the Llama-3-8B prefill's attention writes its result
// [B, H, S, Dh] as [B, S, H, Dh], and the output projection reads its
// operand K-contiguously and takes the tensor-core path, which it does not
// where the same plan stores the result row-major.
func TestStoredLayout(t *testing.T) {
	c := findConfig(t, "llama3_8b", "fused", 40)
	p := c.plan_
	var att, oproj *plan.Kernel
	for _, k := range p.Kernels {
		if k.Strategy == plan.Attention {
			att = k
		}
		if k.Strategy == plan.Gemm && att != nil && slices.Contains(k.Inputs, att.Outputs[0]) {
			oproj = k
		}
	}
	if att == nil || oproj == nil {
		t.Fatalf("no attention kernel and output projection reading it:\n%s", p)
	}
	a := att.Outputs[0]
	if !slices.Equal(p.Layouts[a], plan.Layout{0, 2, 1, 3}) {
		t.Fatalf("attention's result is stored in %v, want axes 0, 2, 1, 3", p.Layouts[a])
	}
	k, err := newKgen(p, att, att.Launch.Block)
	if err != nil {
		t.Fatal(err)
	}
	w, err := k.viewOf(a)
	if err != nil {
		t.Fatal(err)
	}
	s, dh := c.dims["S"], int64(128)
	for axis, want := range []int64{s * 32 * dh, dh, 32 * dh, 1} {
		st, ok := w.simpleAxis(axis)
		got, err := st.eval(c.dims)
		if !ok || err != nil || got != want {
			t.Errorf("axis %d of the attention's stores: stride %v (%v), want %d", axis, st, err, want)
		}
	}
	for _, stored := range []bool{true, false} {
		q := *p
		if !stored {
			q.Layouts = nil
		}
		k, err := newKgen(&q, oproj, oproj.Launch.Block)
		if err != nil {
			t.Fatal(err)
		}
		g, err := k.gemmModel()
		if err != nil {
			t.Fatal(err)
		}
		if g.aK != stored || g.mmaAble() != stored {
			t.Errorf("stored permuted: %t: the output projection's operand K-contiguous %t, tensor-core path %t", stored, g.aK, g.mmaAble())
		}
	}
}
