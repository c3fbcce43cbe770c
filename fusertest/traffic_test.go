package fusertest_test

import (
	"testing"

	"github.com/fuser-dev/fuser/fusertest"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
)

// The chapter's numbers: one head, N = 8192, d = 128, bf16.
const selfAttention = `layer one_head
dim N
const Dh = 128
input  q : bf16[1, 1, N, Dh]
input  k : bf16[1, 1, N, Dh]
input  v : bf16[1, 1, N, Dh]
output o : bf16[1, 1, N, Dh]
o = softmax((q * 0.08838834764831845) @ transpose(k), axis=-1) @ v
`

// TestNaiveAttentionScoreTraffic: the unfused plan writes S, reads it in
// softmax, writes P and reads it in P·V: 4·N²·b bytes.
func TestNaiveAttentionScoreTraffic(t *testing.T) {
	const n, b = 8192, 2
	r := fusertest.Traffic(t, selfAttention, map[string]int64{"N": n})
	var scores int64
	for _, k := range r.UnfusedPlan.Kernels {
		for _, vs := range [][]*ir.Value{k.Inputs, k.Outputs} {
			for _, v := range vs {
				if s := v.Type.Shape; len(s) == 4 && s[2].Equal(s[3]) {
					size, _ := plan.Bytes(v, r.Dims)
					scores += size
				}
			}
		}
	}
	if want := int64(4 * n * n * b); scores != want || want != 536_870_912 {
		t.Errorf("S and P traffic %d, want 4·N²·b = %d", scores, want)
	}
}

// TestFlashAttentionCompulsoryTraffic: the fused plan is one attention
// kernel reading Q, K, V and writing O once: 4·N·d·b = 8 MiB; the K/V
// re-streaming per query block is reported as L2 traffic.
func TestFlashAttentionCompulsoryTraffic(t *testing.T) {
	const n, d, b = 8192, 128, 2
	r := fusertest.Traffic(t, selfAttention, map[string]int64{"N": n})
	if len(r.Fused) != 1 || r.Fused[0].Strategy != plan.Attention {
		t.Fatalf("fused plan %v, want one attention kernel", r.Fused)
	}
	c := r.Fused[0]
	if got, want := c.Bytes(), int64(4*n*d*b); got != want || want != 8<<20 {
		t.Errorf("flash attention moves %d bytes, want 4·N·d·b = %d", got, want)
	}
	// 64 query blocks of 128 rows each stream all of K and V; one pass is
	// compulsory, the other 63 come from L2.
	if want := int64(63 * n * 2 * d * b); c.L2Bytes != want {
		t.Errorf("L2 traffic %d, want %d", c.L2Bytes, want)
	}
	if want := int64(4 * n * n * d); c.Flops != want {
		t.Errorf("flops %d, want 4·N²·d = %d", c.Flops, want)
	}
}

// TestResidualRMSNorm: residual add + RMSNorm is one kernel that reads each
// input once and writes the sum and the normalised value once.
func TestResidualRMSNorm(t *testing.T) {
	const src = `layer resnorm
dim B, S
const D = 4096
input  x : bf16[B, S, D]
input  r : bf16[B, S, D]
param  w : bf16[D]
output h : bf16[B, S, D]
output y : bf16[B, S, D]
h = x + r
y = h * rsqrt(mean(h * h, axis=-1) + 1e-5) * w
`
	const rows, d, b = 3 * 7, 4096, 2
	r := fusertest.Traffic(t, src, map[string]int64{"B": 3, "S": 7})
	if len(r.Fused) != 1 {
		t.Fatalf("%d fused kernels, want 1:\n%s", len(r.Fused), r.FusedPlan)
	}
	c := r.Fused[0]
	if want := int64(2*rows*d*b + d*b); c.BytesRead != want {
		t.Errorf("read %d bytes, want x, r and w once: %d", c.BytesRead, want)
	}
	if want := int64(2 * rows * d * b); c.BytesWritten != want {
		t.Errorf("wrote %d bytes, want h and y once: %d", c.BytesWritten, want)
	}
	// Unfused, h is read back three times and two full-size temporaries make
	// a round trip each: 10 full-size transfers, plus the per-row statistics
	// (mean written, then read and written by add and rsqrt, read by the
	// scaling multiply) and w.
	full, stat := int64(rows*d*b), int64(rows*b)
	if want := 10*full + 6*stat + d*b; r.UnfusedTotal.Bytes() != want {
		t.Errorf("unfused %d bytes, want %d", r.UnfusedTotal.Bytes(), want)
	}
}

// TestLlamaDecode: the default spec in decode plans to at most 8 kernel
// launches, and moves within 5% of the floor: 7 kernels at every batch,
// the norms row kernels of their own.
func TestLlamaDecode(t *testing.T) {
	_, src, _ := specs.Source(specs.Default)
	want := []string{
		"k00_row_mul_mean_add_rsqrt",
		"k01_gemm_matmul_rope_append",
		"k02_attention_attention",
		"k03_gemm_matmul_add",
		"k04_row_mul_mean_add_rsqrt",
		"k05_gemm_matmul_silu_mul",
		"k06_gemm_matmul_add",
	}
	for _, dims := range []map[string]int64{
		{"B": 1, "S": 1, "T": 4096},
		{"B": 16, "S": 1, "T": 8192},
		{"B": 64, "S": 1, "T": 4096},
	} {
		r := fusertest.Traffic(t, src, dims)
		var names []string
		for _, c := range r.Fused {
			names = append(names, c.Kernel)
		}
		if len(names) != len(want) {
			t.Fatalf("%v: kernels %v, want %v", dims, names, want)
		}
		for i := range want {
			if names[i] != want[i] {
				t.Errorf("%v: kernel %d is %s, want %s", dims, i, names[i], want[i])
			}
		}
		if r.FusedTotal.Launches > 8 {
			t.Errorf("%v: %d launches, want ≤ 8", dims, r.FusedTotal.Launches)
		}
		if over := r.OverFloor(); over > 1.05 || over < 1 {
			t.Errorf("%v: fused bytes %d are %.4fx the floor %d, want within 5%%", dims, r.FusedTotal.Bytes(), over, r.Floor)
		}
		if r.Ratio() < 1 {
			t.Errorf("%v: unfused moves less than fused (%.3f)", dims, r.Ratio())
		}
	}
}
