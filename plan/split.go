package plan

import "math"

// The split formulas decode attention's device code computes too. Each
// function here is the Go twin of device code in codegen/cuda's flash
// library and states the same arithmetic in the same order, so that the
// plan (cost model, workspace, prefix split count) and the kernel agree:
//
//   - PrefixSplit is fz_att_psplit (codegen/cuda/device/attention_cascade.cuh);
//   - DecodeSplit is fz_att_splits, the decode's split of a sequence's
//     visible keys (codegen/cuda/device/attention_flash.cuh).
//
// The twins are checked against a plain restatement over a grid of shapes,
// and the generated source against the device text (split_test.go,
// codegen/cuda's TestSplitTwins); there is no GPU in the unit tests to run
// the device side itself.

// PrefixMinKeys is the fewest keys a split of a cascade's prefix pass takes
// outside deterministic mode.
const PrefixMinKeys = 256

// roundKeys rounds a key count up to whole 16-key tiles.
func roundKeys(n int64) int64 { return (n + DecodeTileKeys - 1) / DecodeTileKeys * DecodeTileKeys }

// PrefixSplit is the prefix pass's split of a cascade's npre shared keys
// (fz_att_psplit): chunk keys a split when chunk > 0 (deterministic mode);
// otherwise the keys divided over nps splits, at least PrefixMinKeys keys
// a split, rounded up to 16. At most slots - 1 splits, so that a slot stays
// for the own keys; 0 with no prefix keys or fewer than 2 slots. It returns
// the split count and size.
func PrefixSplit(npre, slots, chunk, nps int64) (n, size int64) {
	if npre <= 0 || slots < 2 {
		return 0, 0
	}
	size = chunk
	if size <= 0 {
		size = max(roundKeys((npre+nps-1)/nps), PrefixMinKeys)
	}
	n = (npre + size - 1) / size
	if n > slots-1 {
		size = roundKeys((npre + slots - 2) / (slots - 1))
		n = (npre + size - 1) / size
	}
	return n, size
}

// DecodeSplit is decode attention's split of vis visible keys (the device's
// split in fz_att_splits): chunk keys a split when chunk > 0, else the keys
// divided evenly over nsplit splits (the grid's), rounded up to 16; when
// that takes more than slots splits (the workspace's own-key slots), the
// keys divided over the slots instead. One split when no key is visible.
// It returns the split count and size.
func DecodeSplit(vis, nsplit, chunk, slots int64) (n, size int64) {
	size = chunk
	if size <= 0 {
		size = roundKeys((vis + nsplit - 1) / nsplit)
	}
	size = max(size, DecodeTileKeys)
	n = 1
	if vis > 0 {
		n = (vis + size - 1) / size
	}
	if n > 1 && n > slots {
		if slots > 1 {
			size = roundKeys((vis + slots - 1) / slots)
		} else {
			size = max(vis, DecodeTileKeys)
		}
		n = (vis + size - 1) / size
	}
	return n, size
}

// PrefixSplits is the split count of a cascade decode's prefix pass
// (codegen/cuda's fz_att_prefix, which attends the prefix the whole batch
// shares once per kv head; the kernel is built with this count, which
// fz_att_psplit takes as its NPS): npre prefix keys against rows query rows
// per kv head (batch × heads per kv head × queries), tiled 16 rows a warp,
// block/32 warps a block, over kvHeads kv heads, on blocks blocks at once
// (the target's block slots, or the grid's blocks when fewer). With
// splitKeys > 0 (deterministic mode) every split is splitKeys keys;
// otherwise the keys are divided so that the work items (split × kv head ×
// row block) about fill the blocks, at least PrefixMinKeys keys a split:
// more splits would only add partials for the decode kernel to merge. 0
// when there are no prefix keys. The device takes at most one split fewer
// than the workspace's slots, which the launch pass sizes for this count.
func PrefixSplits(npre, rows, kvHeads, blocks int64, block int, splitKeys int64) int64 {
	br := 16 * max(int64(block)/32, 1)
	items := max(kvHeads*((rows+br-1)/br), 1)
	n, _ := PrefixSplit(npre, math.MaxInt64, splitKeys, max(blocks/items, 1))
	return n
}
