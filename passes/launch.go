package passes

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// Launch-plan constants. GEMV blocks own gemvCols output columns and split K
// until the grid holds gemvBlocksPerSM blocks an SM, each split at least
// gemvMinSplitRows rows (bench/gemv_variants: on the H200 two blocks an SM
// stream the decode GEMVs fastest); attention
// prefill tiles are Br×Bc; decode splits cover at least minSplitTokens keys,
// in blocks of decodeBlock threads, or of wideDecodeBlock when the splits
// fill the SMs one block each, stream at least wideMinKeys keys each and
// the SM holds wideMinStages stages of its warps.
const (
	gemvMaxRows      = 16
	gemvCols         = 256
	gemvBlocksPerSM  = 2
	gemvMinSplitRows = 64
	gemmTile         = 128
	prefillBr        = 128
	minSplitTokens   = 256
	decodeBlock      = 128
	wideDecodeBlock  = 256
	wideMinKeys      = 4096
	wideMinStages    = 3
)

// wideStages is the stages of a one-block-an-SM decode ring of
// wideDecodeBlock threads at head dim dh.
func wideStages(dh int64) int64 {
	stages, _ := plan.DecodeRingSolo(dh, wideDecodeBlock)
	return stages
}

// launch sizes every kernel's grid at the bound dims. Decode attention (few
// queries per kv head) gets a split-KV count from batch × kv-heads × context
// against the SM count: no split when the (sequence, kv-head) pairs already
// fill the GPU, more splits for long contexts at small batch.
func launch(s *State) (int, error) {
	for _, k := range s.Plan.Kernels {
		l, err := launchOf(s, k)
		if err != nil {
			return 0, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		k.Launch = l
	}
	return len(s.Plan.Kernels), nil
}

func launchOf(s *State, k *plan.Kernel) (*plan.Launch, error) {
	eval := func(d ir.Dim) int64 {
		v, _ := d.Eval(s.Dims)
		return v
	}
	first := k.Nodes[0]
	switch k.Strategy {
	case plan.Gemm:
		a, out := first.Args[0].Type.Shape, first.Outs[0].Type.Shape
		m, n, kk := eval(a[len(a)-2]), eval(out[len(out)-1]), eval(a[len(a)-1])
		batch := int64(1)
		for _, d := range out[:len(out)-2] {
			batch *= eval(d)
		}
		if len(first.Args[1].Type.Shape) == 2 {
			// A 2-D weight is shared by every row: the kernel folds the
			// leading axes into M, so the path is chosen from all rows.
			m, batch = m*batch, 1
		}
		if m <= gemvMaxRows {
			// Split K when the column tiles leave SMs idle; the last split
			// of each tile sums the partials in the same launch. A column
			// count bound only at run time (a ragged N) is not split.
			blocks := ceilDiv(n, gemvCols) * batch
			split := int64(1)
			if _, constN := out[len(out)-1].Value(); constN && blocks < gemvBlocksPerSM*s.Target.SMs {
				split = max(1, min(ceilDiv(gemvBlocksPerSM*s.Target.SMs, blocks), kk/gemvMinSplitRows))
			}
			return &plan.Launch{Variant: "gemv", Grid: [3]int64{ceilDiv(n, gemvCols), batch, split}, Block: 256, Launches: 1, Splits: split, Tile: [2]int64{m, gemvCols}}, nil
		}
		return &plan.Launch{Variant: "gemm", Grid: [3]int64{ceilDiv(n, gemmTile), ceilDiv(m, gemmTile), batch}, Block: 384, Launches: 1, Splits: 1, Tile: [2]int64{gemmTile, gemmTile}}, nil
	case plan.Attention:
		return attentionLaunch(s, first, eval), nil
	case plan.Row:
		rows := int64(1)
		for _, d := range rowDomain(first) {
			rows *= eval(d)
		}
		return &plan.Launch{Variant: "row", Grid: [3]int64{rows, 1, 1}, Block: 256, Launches: 1, Splits: 1}, nil
	}
	elems, err := first.Outs[0].Type.Shape.NumElements().Eval(s.Dims)
	if err != nil {
		return nil, err
	}
	if first.Op == ir.OpAppend {
		elems, _ = first.Args[1].Type.Shape.NumElements().Eval(s.Dims)
	}
	return &plan.Launch{Variant: k.Strategy.String(), Grid: [3]int64{max(1, ceilDiv(elems, 256*8)), 1, 1}, Block: 256, Launches: 1, Splits: 1}, nil
}

// attentionLaunch picks decode (split-KV) or prefill (tiled) for the bound
// query length.
func attentionLaunch(s *State, n *ir.Node, eval func(ir.Dim) int64) *plan.Launch {
	q, kv := n.Args[0].Type.Shape, n.Args[len(n.Args)-2].Type.Shape
	b, h, sq, g, tk := eval(q[0]), eval(q[1]), eval(q[2]), eval(kv[1]), eval(kv[2])
	if n.Attr.Attn.Cascade {
		tk += eval(n.Args[1].Type.Shape[2])
	}
	group := h / max(g, 1)
	if sq*group <= gemvMaxRows {
		// Decode: blocks of (split, kv head, sequence), each streaming its
		// keys through a ring of DecodeRing stages; the splits fill the
		// SMs' block slots (blocks per SM × SMs) when the (sequence, kv
		// head) pairs do not, keeping at least minSplitTokens keys a split.
		// When the pairs are at most half the SMs, the splits fill the SMs
		// one block each instead: the deeper ring of DecodeRingSolo keeps
		// more of a block's tiles in flight, and half the partials leave
		// less for the last split to merge (H200, B1 L32768: 42.6 µs
		// against 45.3 at two blocks an SM, the g33 variant of
		// bench/results/2026-11-29-h200-decode-attention-3).
		//
		// Long splits that fill the SMs one block each take blocks of 8
		// warps instead of 4 (3 stages each, the same bytes): twice the
		// streams an SM, which keeps more of the SM's tiles in flight
		// through each warp's compute (H200, the variants of
		// bench/results/2026-11-30-h200-decode-attention-6: B16 L8192 in
		// one split of 8 warps 125.6 µs against 129.3 in two of 4 warps
		// two blocks an SM; B1 L131072 128.3 against 131.8; B1 L32768,
		// 2048 keys a split, 41.8 against 41.7; B64 L4096, which the
		// block slots already fill, 250.9 against 248.0). Not in
		// deterministic mode, whose splits must not change with the
		// batch, nor for a cascade (its prefix pass keeps 4 warps), nor
		// where the SM holds fewer than wideMinStages stages of 8 warps
		// (head dims past 128).
		dh := eval(q[3])
		block := decodeBlock
		_, smem := plan.DecodeRing(dh, block)
		slots := s.Target.SMs * plan.DecodeBlocksPerSM(dh, block)
		units := b * g * ceilDiv(sq*group, 16)
		flash := n.Args[0].Type.DType == ir.BF16 || n.Args[0].Type.DType == ir.F16
		splits, chunk := int64(1), int64(0)
		solo := max(1, min(s.Target.SMs/max(units, 1), ceilDiv(tk, minSplitTokens)))
		switch {
		case s.DecodeSplitKeys > 0:
			chunk = (s.DecodeSplitKeys + plan.DecodeTileKeys - 1) / plan.DecodeTileKeys * plan.DecodeTileKeys
			splits = max(1, ceilDiv(tk, chunk))
		case flash && !n.Attr.Attn.Cascade && units <= s.Target.SMs && 4*units*solo >= 3*s.Target.SMs && ceilDiv(tk, solo) >= wideMinKeys && wideStages(dh) >= wideMinStages:
			splits, block = solo, wideDecodeBlock
		case 2*units <= s.Target.SMs:
			splits = solo
		case units < slots:
			splits = max(1, min(slots/max(units, 1), ceilDiv(tk, minSplitTokens)))
		}
		if units*splits <= s.Target.SMs {
			// One block an SM: the deeper ring.
			_, smem = plan.DecodeRingSolo(dh, block)
		}
		l := &plan.Launch{Variant: "decode", Grid: [3]int64{splits, g, b}, Block: block, SharedBytes: smem, Launches: 1, Splits: splits, SplitKeys: chunk, Tile: [2]int64{sq * group, plan.DecodeTileKeys}}
		if !flash {
			// codegen/cuda's CUDA-core kernel (other dtypes): static shared
			// memory, and a second launch merging the splits (a cascade's
			// prefix is one of them).
			l.SharedBytes = 0
			if splits > 1 || n.Attr.Attn.Cascade {
				l.Launches = 2
			}
			return l
		}
		// Otherwise one launch: the last split of each (sequence, kv head)
		// to finish merges the partials. A cascade whose prefix the whole
		// batch shares takes a launch before it (when the prefix has keys):
		// the prefix pass, which attends the prefix once per kv head for
		// every sequence.
		pre := n.Args[1].Type.Shape
		if batch, _ := pre[0].Value(); n.Attr.Attn.Cascade && batch == 1 {
			l.PrefixSplits = plan.PrefixSplits(eval(pre[2]), b*sq*group, g, min(splits*g*b, slots), block, chunk)
			if l.PrefixSplits > 0 {
				l.Launches = 2
			}
		}
		return l
	}
	return &plan.Launch{Variant: "prefill", Grid: [3]int64{ceilDiv(sq, prefillBr), h, b}, Block: 256, Launches: 1, Splits: 1, Tile: [2]int64{prefillBr, 64}}
}

func ceilDiv(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
