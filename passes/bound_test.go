package passes_test

import (
	"testing"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
)

// TestArena checks the memory plan of every spec, fused and unfused: each
// intermediate buffer has an aligned offset inside the arena, buffers whose
// live ranges overlap never share bytes, and the unfused plan reuses space.
func TestArena(t *testing.T) {
	for _, name := range specs.Names() {
		for _, pipeline := range [][]passes.Pass{passes.Fused, passes.Unfused} {
			st, err := passes.Run(load(t, name), pipeline, passes.Options{Dims: specDims})
			if err != nil {
				t.Fatal(err)
			}
			p := st.Plan
			live := liveRanges(p)
			var total int64
			for v, off := range p.Arena.Offsets {
				size := p.Arena.Bytes[v]
				total += size
				if off%256 != 0 || off+size > p.Arena.Size {
					t.Fatalf("%s: %s at %d+%d outside arena %d or unaligned", name, v.Ref(), off, size, p.Arena.Size)
				}
				for w, off2 := range p.Arena.Offsets {
					if v == w || !overlaps(live[v], live[w]) {
						continue
					}
					if off < off2+p.Arena.Bytes[w] && off2 < off+size {
						t.Fatalf("%s: %s and %s are live together and overlap in the arena", name, v.Ref(), w.Ref())
					}
				}
			}
			if len(pipeline) == len(passes.Unfused) && p.Arena.Size >= total {
				t.Errorf("%s unfused: arena %d bytes reuses nothing of %d", name, p.Arena.Size, total)
			}
		}
	}
}

func liveRanges(p *plan.Plan) map[*ir.Value][2]int {
	live := map[*ir.Value][2]int{}
	for i, k := range p.Kernels {
		for _, o := range k.Outputs {
			live[o] = [2]int{i, i}
		}
		for _, in := range k.Inputs {
			if r, ok := live[plan.Root(in)]; ok {
				live[plan.Root(in)] = [2]int{r[0], i}
			}
		}
	}
	return live
}

func overlaps(a, b [2]int) bool { return a[0] <= b[1] && b[0] <= a[1] }

// TestSplitKV checks the decode split count: none when batch × kv-heads
// fills the 264 block slots (132 SMs × 2 blocks of the d=128 ring), more
// for longer contexts at batch 1, capped so every split streams at least
// 256 keys; one launch (the last split merges); prefill is tiled instead.
// A decode grid of at most one block an SM gets the deeper ring (6 stages
// of 4 warps × 16 keys × 2 rows × 136 elements × 2 bytes, plus the query
// tile of 16 rows: 213248 bytes; with 8 warps, 3 stages: the same bytes),
// others the ring two blocks share (3 stages: 108800). Splits of at least
// 4096 keys that fill three quarters of the SMs one block each take 8
// warps; deterministic mode (split-keys) and cascades keep 4.
func TestSplitKV(t *testing.T) {
	g := load(t, specs.Default)
	tests := []struct {
		b, s, t   int64
		splitKeys int64
		variant   plan.Variant
		splits    int64
		block     int
		smem      int64
	}{
		{1, 1, 4096, 0, plan.VariantDecode, 16, 128, 213248},    // 8 (seq, kv-head) pairs, at most half the SMs: 132/8 splits of 257 keys, one block an SM
		{1, 1, 4095, 0, plan.VariantDecode, 16, 128, 213248},    // 4096 keys: 16 splits, 128 blocks
		{1, 1, 32767, 0, plan.VariantDecode, 16, 128, 213248},   // 2048 keys a split: 4 warps
		{1, 1, 131072, 0, plan.VariantDecode, 16, 256, 213248},  // 8193 keys a split: 8 warps of 3 stages
		{2, 1, 32767, 0, plan.VariantDecode, 8, 256, 213248},    // 16 pairs × 8 splits of 4096 keys
		{4, 1, 8192, 0, plan.VariantDecode, 4, 128, 213248},     // 32 pairs: 132/32 → 4 splits of 2049 keys
		{12, 1, 8192, 0, plan.VariantDecode, 2, 128, 108800},    // 96 pairs: 96 blocks would leave a quarter of the SMs idle; the block slots, 264/96 → 2, two blocks an SM
		{16, 1, 8192, 0, plan.VariantDecode, 1, 256, 213248},    // 128 pairs fill the SMs one block each: 8 warps, no split
		{16, 1, 8192, 1024, plan.VariantDecode, 9, 128, 108800}, // deterministic: splits of 1024 keys, 4 warps
		{64, 1, 4096, 0, plan.VariantDecode, 1, 128, 108800},    // 512 pairs already fill the GPU: no split
		{1, 1, 100, 0, plan.VariantDecode, 1, 128, 213248},      // 101 keys: one split
		{1, 1, 300, 0, plan.VariantDecode, 2, 128, 213248},      // 301 keys: 2 splits of at least 256
		{2, 512, 0, 0, plan.VariantPrefill, 1, 384, 230400},     // the wgmma prefill: 1 KiB of slack, the 32 KiB query tile, 3 stages of 64 KiB
	}
	// Head dim 256 (Gemma-2): 8 warps of even 2 stages would not fit the
	// SM, so 4 warps of 3 stages (4 × 2 × 16 × 264 × 2 bytes each, plus
	// the query tile) at the same plan.
	gemma := load(t, "gemma2_softcap")
	st, err := passes.Run(gemma, passes.Fused, passes.Options{Dims: map[string]int64{"B": 16, "S": 1, "T": 8192}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range st.Plan.Kernels {
		if l := k.Launch; k.Strategy == plan.Attention && (l.Block != 128 || l.Splits != 1 || l.SharedBytes != 211200) {
			t.Errorf("gemma2_softcap B=16 T=8192: %s, want 1 split of 128 threads, 211200 bytes", l)
		}
	}
	for _, tt := range tests {
		st, err := passes.Run(g, passes.Fused, passes.Options{Dims: map[string]int64{"B": tt.b, "S": tt.s, "T": tt.t}, DecodeSplitKeys: tt.splitKeys})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range st.Plan.Kernels {
			if k.Strategy != plan.Attention {
				continue
			}
			l := k.Launch
			if l.Variant != tt.variant || l.Splits != tt.splits || l.Block != tt.block || l.Launches != 1 || l.SharedBytes != tt.smem {
				t.Errorf("B=%d S=%d T=%d split-keys=%d: %s splits %d block %d launches %d smem %d, want %s %d %d 1 %d",
					tt.b, tt.s, tt.t, tt.splitKeys, l.Variant, l.Splits, l.Block, l.Launches, l.SharedBytes, tt.variant, tt.splits, tt.block, tt.smem)
			}
		}
	}
}
