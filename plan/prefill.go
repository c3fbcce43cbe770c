package plan

// The wgmma prefill attention (codegen/cuda's fz_att_prefill_wg, sm_90a):
// blocks of PrefillWGThreads threads, a producer warpgroup filling a ring
// of K and V tiles, BC keys a stage, in dynamic shared memory after the
// block's query tile for two consumer warpgroups of 64 query rows each,
// every tile 1024-byte aligned for wgmma's 128-byte swizzle. The launch plan sizes it here and the code
// generator checks the launch against it, so both agree.
const (
	// PrefillWGRows is a block's query rows.
	PrefillWGRows = 128
	// PrefillWGThreads is a block's threads: two consumer warpgroups of 64
	// query rows and a producer warpgroup.
	PrefillWGThreads = 384
	// prefillWGAlign is the slack that aligns the tiles to 1024 bytes.
	prefillWGAlign = 1024
)

// PrefillWGHeadDim reports whether the wgmma prefill takes head dim dh:
// whole 128-byte lines (64 16-bit elements) up to 256.
func PrefillWGHeadDim(dh int64) bool { return dh > 0 && dh <= 256 && dh%64 == 0 }

// PrefillWGKeys is the wgmma prefill's keys a step at head dim dh: 128 up
// to a head dim of 128, where a consumer's scores and output take 64
// registers a thread each; 32 past it, where the output alone takes 128
// (64 keys spilled in the kernel before it had a producer warpgroup, at
// 255 registers; its consumers now hold 224).
func PrefillWGKeys(dh int64) int64 {
	if dh > 128 {
		return 32
	}
	return 128
}

// PrefillWGBytes is the wgmma prefill's dynamic shared memory at head dim
// dh and stages: the alignment slack, the query tile, and a K and a V tile
// a stage.
func PrefillWGBytes(dh, stages int64) int64 {
	return prefillWGAlign + PrefillWGRows*dh*2 + stages*2*PrefillWGKeys(dh)*dh*2
}

// PrefillWG is the wgmma prefill's ring at head dim dh on target t: its
// keys a step (PrefillWGKeys), stages (as many as the block's shared memory
// holds, up to 3) and the block's dynamic shared memory in bytes
// (PrefillWGBytes). ok is false where the target has no wgmma, the head dim
// is not taken or two stages do not fit.
func PrefillWG(t Target, dh int64) (bc, stages, bytes int64, ok bool) {
	if !t.WGMMA || !PrefillWGHeadDim(dh) {
		return 0, 0, 0, false
	}
	for stages = 3; stages >= 2; stages-- {
		if b := PrefillWGBytes(dh, stages); b <= t.SharedPerBlock {
			return PrefillWGKeys(dh), stages, b, true
		}
	}
	return 0, 0, 0, false
}
