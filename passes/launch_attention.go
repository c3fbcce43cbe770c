package passes

import (
	"math"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// Attention launch constants: prefill tiles are prefillBr×prefillBc;
// decode splits cover at least minSplitTokens keys, in blocks of
// decodeBlock threads, or of wideDecodeBlock when the splits fill the SMs
// one block each, stream at least wideMinKeys keys each and the SM holds
// wideMinStages stages of its warps.
const (
	// prefillPersistBands: the wgmma prefill runs persistent blocks
	// (Launch.Persistent) where a round of one item an SM spans fewer
	// query-tile bands (a band: one tile index over every head and
	// sequence, items of one length under a causal mask) than this; the
	// blocks take the items round-robin, so that a round spanning more
	// bands gives the first blocks the longer items of every round. On an
	// H100 and an H200, beside a block an item in one call each
	// (bench/results/2026-12-06-rows): 1.15x at 256 heads x sequences a
	// band (B8 N1024), 1.05x at 64 (B2 N4096), 0.97x at 32 (B1 N4096) and
	// 0.96x at 32 (B1 N16384), for 132 SMs.
	prefillPersistBands = 3
	prefillBr           = 128
	prefillBc           = 64
	prefillBlock        = 256
	minSplitTokens      = 256
	decodeBlock         = 128
	wideDecodeBlock     = 256
	wideMinKeys         = 4096
	wideMinStages       = 3
)

// wideStages is the stages of a one-block-an-SM decode ring of
// wideDecodeBlock threads at head dim dh.
func wideStages(t plan.Target, dh int64) int64 {
	stages, _ := plan.DecodeRingSolo(t, dh, wideDecodeBlock)
	return stages
}

// attentionLaunch picks decode (split-KV) or prefill (tiled) for the bound
// query length, on tensor cores when codegen's FlashAttention takes the
// node and on CUDA cores otherwise: that fallback is logged. A tensor-core
// prefill issues wgmma where the target has it, the head dim is 64, 128 or
// 256 (plan.PrefillWG) and codegen's WGMMAPrefill takes the node (else the
// logged fallback is mma.sync), mma.sync otherwise.
func attentionLaunch(s *State, k *plan.Kernel, eval func(ir.Dim) int64) *plan.Launch {
	n := k.Nodes[0]
	flash := !s.SIMTAttention
	if flash {
		if err := codegen.FlashAttention(n); err != nil {
			flash = false
			s.explain(false, "%s on tensor cores: %v; the CUDA-core kernel runs it", k.Name, err)
		}
	}
	if n.Attr.Attn.Varlen {
		return varlenLaunch(n, eval)
	}
	q, kv := n.Args[0].Type.Shape, n.AttentionKeys().Type.Shape
	b, h, sq, g := eval(q[0]), eval(q[1]), eval(q[2]), eval(kv[1])
	if sq*(h/max(g, 1)) <= plan.DecodeMaxRows {
		return decodeLaunch(s, n, flash, eval)
	}
	v := plan.VariantPrefill
	if !flash {
		v = plan.VariantPrefillSIMT
	}
	if flash {
		bc, stages, smem, ok := plan.PrefillWG(s.Target, eval(q[3]))
		if ok {
			if err := codegen.WGMMAPrefill(n); err != nil {
				ok = false
				s.explain(false, "%s on wgmma: %v; the mma.sync prefill runs it", k.Name, err)
			}
		}
		if ok {
			l := &plan.Launch{Variant: v, Grid: [3]int64{ceilDiv(sq, plan.PrefillWGRows), h, b}, Block: plan.PrefillWGThreads, SharedBytes: smem, Launches: 1, Splits: 1, Tile: [2]int64{plan.PrefillWGRows, bc}, Stages: stages, WGMMA: true}
			if s.Target.SMs < prefillPersistBands*h*b {
				// A block an SM, each taking (query tile, head, sequence)
				// items in turn (fz_att_wg_item).
				l.Persistent = true
				l.Grid = [3]int64{max(1, min(l.Grid[0]*h*b, s.Target.SMs)), 1, 1}
			}
			return l
		}
	}
	return &plan.Launch{Variant: v, Grid: [3]int64{ceilDiv(sq, prefillBr), h, b}, Block: prefillBlock, Launches: 1, Splits: 1, Tile: [2]int64{prefillBr, prefillBc}}
}

// varlenLaunch is the launch of attention over packed queries q [H, N,
// Dh] (ir.Attention.Varlen), on CUDA cores: a block a (query tile of
// prefillBr rows of one sequence, query head), the tiles of every sequence
// along x (plan.VarlenItems, bounded by N and the B sequences of K), the
// heads along y.
func varlenLaunch(n *ir.Node, eval func(ir.Dim) int64) *plan.Launch {
	q, kv := n.Args[0].Type.Shape, n.AttentionKeys().Type.Shape
	items := plan.VarlenItems(eval(q[1]), eval(kv[0]), prefillBr)
	return &plan.Launch{Variant: plan.VariantVarlenSIMT, Grid: [3]int64{items, eval(q[0]), 1}, Block: prefillBlock, Launches: 1, Splits: 1, Tile: [2]int64{prefillBr, prefillBc}}
}

// decodeLaunch is split-KV decode attention's launch.
//
// Blocks of (split, kv head, sequence), each streaming its keys through a
// ring of DecodeRing stages; the splits fill the SMs' block slots (blocks
// per SM × SMs) when the (sequence, kv head) pairs do not, keeping at least
// minSplitTokens keys a split. When the pairs are at most half the SMs, the
// splits fill the SMs one block each instead: the deeper ring of
// DecodeRingSolo keeps more of a block's tiles in flight, and half the
// partials leave less for the last split to merge (H200, B1 L32768: 42.6 µs
// against 45.3 at two blocks an SM, the g33 variant of
// bench/results/2026-11-29-h200-decode-attention-3).
//
// Long splits that fill the SMs one block each take blocks of 8 warps
// instead of 4 (3 stages each, the same bytes): twice the streams an SM,
// which keeps more of the SM's tiles in flight through each warp's compute
// (H200, the variants of bench/results/2026-11-30-h200-decode-attention-6:
// B16 L8192 in one split of 8 warps 125.6 µs against 129.3 in two of 4
// warps two blocks an SM; B1 L131072 128.3 against 131.8; B1 L32768, 2048
// keys a split, 41.8 against 41.7; B64 L4096, which the block slots already
// fill, 250.9 against 248.0). Not in deterministic mode, whose splits must
// not change with the batch, nor for a cascade (its prefix pass keeps 4
// warps), nor where the SM holds fewer than wideMinStages stages of 8 warps
// (head dims past 128).
func decodeLaunch(s *State, n *ir.Node, flash bool, eval func(ir.Dim) int64) *plan.Launch {
	t := s.Target
	q, kv := n.Args[0].Type.Shape, n.KeyRows(n.AttentionKeys())
	b, h, sq, g, tk, dh := eval(q[0]), eval(q[1]), eval(q[2]), eval(kv[1]), eval(kv[2]), eval(q[3])
	if n.Attr.Attn.Cascade {
		tk += eval(n.Args[1].Type.Shape[2])
	}
	group := h / max(g, 1)
	block := decodeBlock
	_, smem := plan.DecodeRing(dh, block)
	slots := t.SMs * plan.DecodeBlocksPerSM(t, dh, block)
	units := b * g * ceilDiv(sq*group, 16)
	splits, chunk := int64(1), int64(0)
	solo := max(1, min(t.SMs/max(units, 1), ceilDiv(tk, minSplitTokens)))
	switch {
	case s.DecodeSplitKeys > 0:
		chunk = (s.DecodeSplitKeys + plan.DecodeTileKeys - 1) / plan.DecodeTileKeys * plan.DecodeTileKeys
		splits = max(1, ceilDiv(tk, chunk))
	case flash && !n.Attr.Attn.Cascade && units <= t.SMs && 4*units*solo >= 3*t.SMs && ceilDiv(tk, solo) >= wideMinKeys && wideStages(t, dh) >= wideMinStages:
		splits, block = solo, wideDecodeBlock
	case 2*units <= t.SMs:
		splits = solo
	case units < slots:
		splits = max(1, min(slots/max(units, 1), ceilDiv(tk, minSplitTokens)))
	}
	if units*splits <= t.SMs {
		// One block an SM: the deeper ring.
		_, smem = plan.DecodeRingSolo(t, dh, block)
	}
	l := &plan.Launch{Variant: plan.VariantDecode, Grid: [3]int64{splits, g, b}, Block: block, SharedBytes: smem, Launches: 1, Splits: splits, SplitKeys: chunk, Tile: [2]int64{sq * group, plan.DecodeTileKeys}}
	if !flash {
		// codegen/cuda's CUDA-core kernel: static shared memory, a partial
		// per split, and a second launch merging the splits (a cascade's
		// prefix is one of them).
		l.Variant, l.SharedBytes = plan.VariantDecodeSIMT, 0
		if splits > 1 || n.Attr.Attn.Cascade {
			l.Launches = 2
		}
		l.WorkspaceFloats = l.Grid[0] * l.Grid[2] * l.Grid[1] * l.Tile[0] * (dh + 2)
		return l
	}
	l.Stages = plan.DecodeStages(dh, block, smem)
	// Otherwise one launch: the last split of each (sequence, kv head) to
	// finish merges the partials. A cascade whose prefix the whole batch
	// shares takes a launch before it (when the prefix has keys): the
	// prefix pass, which attends the prefix once per kv head for every
	// sequence.
	pre := n.Args[1].Type.Shape
	if batch, _ := pre[0].Value(); n.Attr.Attn.Cascade && batch == 1 {
		l.PrefixSplits = plan.PrefixSplits(eval(pre[2]), b*sq*group, g, min(splits*g*b, slots), block, chunk)
		if l.PrefixSplits > 0 {
			l.Launches = 2
		}
	}
	l.WorkspaceFloats = flashDecodeWorkspace(l, dh)
	return l
}

// flashDecodeWorkspace is the tensor-core decode kernel's workspace at
// launch l (fz_att_decode): a counter per (sequence, kv head, 16-row
// tile), rounded up to 4, then a partial per slot × sequence × kv head ×
// row of the head group (Tile[0]), Dh + 2 floats. The slots are the
// splits' and the prefix pass's; none with one slot, or past int64.
func flashDecodeWorkspace(l *plan.Launch, dh int64) int64 {
	slots := l.Grid[0] + l.PrefixSplits
	units := l.Grid[2] * l.Grid[1]
	rows := units * l.Tile[0]
	if slots <= 1 || rows <= 0 || slots > math.MaxInt64/4/rows/(dh+2) {
		return 0
	}
	return (units*((l.Tile[0]+15)/16)+3)/4*4 + slots*rows*(dh+2)
}
