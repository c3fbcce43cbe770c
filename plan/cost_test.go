package plan_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// planCosts parses src, plans it fused with opt and returns the plan's
// state and its costs at opt.Dims.
func planCosts(t *testing.T, src string, opt passes.Options) (*passes.State, []plan.Cost) {
	t.Helper()
	g, err := frontend.Parse("cost.fu", src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := passes.Run(g, passes.Fused, opt)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := st.Plan.Costs(opt.Dims)
	if err != nil {
		t.Fatal(err)
	}
	return st, cs
}

// TestPrefillL2Window checks the K/V re-streaming model of prefill
// attention with causal and sliding-window tile skipping: query block i of
// Br rows streams the keys between its first query's window start and its
// last query.
func TestPrefillL2Window(t *testing.T) {
	const src = `layer swa
dim N
const Dh = 64
input  q : bf16[1, 1, N, Dh]
input  k : bf16[1, 1, N, Dh]
input  v : bf16[1, 1, N, Dh]
output o : bf16[1, 1, N, Dh]
o = softmax(window(q @ transpose(k) * 0.125, 300), axis=-1) @ v
`
	const n, br, w, row = 1000, 128, 300, 2 * 64 * 2
	_, cs := planCosts(t, src, passes.Options{Dims: map[string]int64{"N": n}})
	var streamed int64
	for start := int64(0); start < n; start += br {
		hi := min(start+br, n)
		lo := max(0, start-w+1)
		streamed += (hi - lo) * row
	}
	if want := streamed - n*row; len(cs) != 1 || cs[0].L2Bytes != want {
		t.Fatalf("costs %+v, want one attention kernel with %d L2 bytes", cs, want)
	}
	// Every query sees min(i+1, 300) keys.
	var pairs int64
	for i := int64(0); i < n; i++ {
		pairs += min(i+1, w)
	}
	if want := 4 * 64 * pairs; cs[0].Flops != want {
		t.Errorf("flops %d, want %d", cs[0].Flops, want)
	}
}

// TestSplitKPartials checks that a split-K GEMV pays for its partial sums:
// one f32 per row, column and split, written by the splits (HBM, once L2
// evicts them) and read back from L2 by the merge.
func TestSplitKPartials(t *testing.T) {
	const src = `layer proj
dim M
input  a : bf16[M, 4096]
param  w : bf16[4096, 256]
output y : bf16[M, 256]
y = a @ w
`
	st, cs := planCosts(t, src, passes.Options{Dims: map[string]int64{"M": 3}})
	l := st.Plan.Kernels[0].Launch
	// 256 columns are one GEMV block, far from 132 SMs: split K = 4096
	// into min(132/1, 4096/64) = 64, reduced in the launch.
	if len(cs) != 1 || l.Variant != plan.VariantGemv || l.Splits != 64 || cs[0].Launches != 1 {
		t.Fatalf("plan %s, costs %+v: want one split-K GEMV of 64 splits in 1 launch", st.Plan, cs)
	}
	partials := int64(64 * 3 * 256 * 4)
	if want := int64(3*4096*2 + 4096*256*2); cs[0].BytesRead != want {
		t.Errorf("read %d bytes, want %d (a and w)", cs[0].BytesRead, want)
	}
	if want := int64(3*256*2) + partials; cs[0].BytesWritten != want {
		t.Errorf("wrote %d bytes, want %d (y and the partials)", cs[0].BytesWritten, want)
	}
	if cs[0].L2Bytes != partials {
		t.Errorf("L2 served %d bytes, want %d (the partials)", cs[0].L2Bytes, partials)
	}
}

// TestCascadePartials checks a cascade decode's partials, exactly: the
// prefix pass writes one (Dh + 2 floats) per query row and prefix split,
// the decode kernel one per split of the sequence's own keys, and its merge
// reads them all back from L2; the prefix is read once. Bf16 takes the tensor-core
// kernels (the prefix pass, then the decode kernel: two launches), at the
// default split and at a fixed one (deterministic mode); f32 the CUDA-core
// kernel, whose prefix is one more partial.
func TestCascadePartials(t *testing.T) {
	const src = `layer casc
dim B, S, T, L
const H = 32, G = 8, Dh = 128
input  q      : DT[B, H, S, Dh]
input  k      : DT[B, G, S, Dh]
input  v      : DT[B, G, S, Dh]
state  prefix : DT[2, 1, G, L, Dh]
state  kv     : DT[2, B, G, T, Dh]
output o      : DT[B, H, S, Dh]
K, V   = append(kv, k, v)
pk, pv = split(prefix, [1, 1], axis=0)
Ka     = concat(reshape(pk, [1, G, L, Dh]), K, axis=2)
Va     = concat(reshape(pv, [1, G, L, Dh]), V, axis=2)
o = softmax(causal(q @ transpose(Ka) / sqrt(Dh)), axis=-1) @ Va
`
	const b, h, g, dh, own, pre = 64, 32, 8, 128, 512, 8192
	dims := map[string]int64{"B": b, "S": 1, "T": own - 1, "L": pre}
	for _, tc := range []struct {
		dtype                 string
		splitKeys             int64
		splits, prefix, parts int64
		launches              int
	}{
		// 64 × 8 (sequence, kv head) blocks fill the SMs: no split of the
		// own keys; the 264 block slots of the SMs (2 a SM) over 8 kv heads
		// × 4 row blocks of 64 rows give 8 prefix splits of 1024 keys.
		{"bf16", 0, 1, 8, 9, 2},
		// 8704 keys in splits of 512: the grid's 17 splits, 16 of the
		// prefix, one of the own keys.
		{"bf16", 512, 17, 16, 17, 2},
		{"f32", 0, 1, 0, 2, 2},
	} {
		st, cs := planCosts(t, strings.ReplaceAll(src, "DT", tc.dtype), passes.Options{Dims: dims, DecodeSplitKeys: tc.splitKeys})
		k, c := st.Plan.Kernels[len(st.Plan.Kernels)-1], cs[len(cs)-1]
		l := k.Launch
		if k.Strategy != plan.Attention || l.Splits != tc.splits || l.PrefixSplits != tc.prefix || c.Launches != tc.launches {
			t.Fatalf("%s split-keys=%d: kernel %s %s, %d launches: want %d splits, %d prefix splits, %d launches",
				tc.dtype, tc.splitKeys, k.Name, l, c.Launches, tc.splits, tc.prefix, tc.launches)
		}
		sz := int64(2)
		if tc.dtype == "f32" {
			sz = 4
		}
		partials := int64(b*h) * tc.parts * (dh + 2) * 4
		q, prefix, kv := int64(b*h*dh)*sz, int64(2*g*pre*dh)*sz, int64(2*b*g*own*dh)*sz
		if want := q + prefix + kv; c.BytesRead != want {
			t.Errorf("%s split-keys=%d: read %d bytes, want %d (q, the prefix once, the own keys)", tc.dtype, tc.splitKeys, c.BytesRead, want)
		}
		if c.L2Bytes != partials {
			t.Errorf("%s split-keys=%d: L2 served %d bytes, want %d (%d partials)", tc.dtype, tc.splitKeys, c.L2Bytes, partials, tc.parts)
		}
		if want := q + partials; c.BytesWritten != want {
			t.Errorf("%s split-keys=%d: wrote %d bytes, want %d (o and %d partials)", tc.dtype, tc.splitKeys, c.BytesWritten, want, tc.parts)
		}
	}
}

// TestFlopsOverflow: a matmul whose operands fit int64 bytes but whose
// 2·M·N·K does not is an error naming the overflow, not a negative count.
func TestFlopsOverflow(t *testing.T) {
	const src = `layer big
dim M
input  a : bf16[M, 2097152]
param  w : bf16[2097152, 2097152]
output y : bf16[M, 2097152]
y = a @ w
`
	g, err := frontend.Parse("cost.fu", src)
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int64{"M": 2097152}
	st, err := passes.Run(g, passes.Fused, passes.Options{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := st.Plan.Costs(dims)
	if !errors.Is(err, ir.ErrOverflow) {
		t.Fatalf("costs %+v, error %v: want the FLOPs to overflow", cs, err)
	}
}

// TestLoadStageCost: the load stage (1 + w, two sibling weights joined) is
// counted apart from the step, byte for byte: Total is the step's kernels,
// which read the folded buffers as params, and LoadTotal the load stage's.
func TestLoadStageCost(t *testing.T) {
	const src = `layer fold
dim M
const D = 64
input  x  : f32[M, D]
param  wn : f32[D]
param  wa : f32[D, 32]
param  wb : f32[D, 96]
output y  : f32[M, 32]
output z  : f32[M, 96]
h = x * rsqrt(mean(x * x, axis=-1) + 1e-6) * (1 + wn)
y = silu(h @ wa)
z = silu(h @ wb)
`
	st, cs := planCosts(t, src, passes.Options{Dims: map[string]int64{"M": 1}})
	load, step := plan.LoadTotal(cs), plan.Total(cs)
	// Load: 1 + wn reads and writes 64 floats; the concat reads wa and wb
	// and writes them joined, 64·128 floats.
	wantLoad := int64(64*4 + 64*128*4)
	if load.BytesRead != wantLoad || load.BytesWritten != wantLoad || load.Launches != 2 || load.Flops != 64 || len(st.Plan.Folded()) != 2 {
		t.Errorf("load stage %+v, want %d bytes read and written, 64 FLOPs, 2 launches", load, wantLoad)
	}
	// Step: the norm's row kernel reads x and the folded 1 + wn and writes
	// h; the one-row GEMV reads h and the joined weight and writes y and z
	// (its epilogue's silu), plus any split-K partials (written, then
	// read from L2).
	var partials int64
	for _, k := range st.Plan.Kernels {
		if k.Launch.Variant == plan.VariantGemv {
			partials += k.Launch.WorkspaceFloats * 4
		}
	}
	wantRead := int64(64*4+64*4) + int64(64*4) + int64(64*128*4) + partials
	wantWritten := int64(64*4) + int64(128*4) + partials
	if step.BytesRead != wantRead || step.BytesWritten != wantWritten || step.L2Bytes != partials || step.Launches != 2 {
		t.Errorf("step %+v, want %d bytes read, %d written, %d from L2, 2 launches:\n%s", step, wantRead, wantWritten, partials, st.Plan)
	}
	if step.Load || !load.Load {
		t.Errorf("totals marked load %v (step) and %v (load)", step.Load, load.Load)
	}
}
