package plan

// Decode attention's shared-memory ring (codegen/cuda's fz_att_decode):
// each warp of the block streams tiles of 16 keys of K and V through its own
// ring of stages, rows of the head dim rounded up to 16 plus 8 elements of
// padding, 16-bit; after the ring, the block's 16 query rows in the same
// row format. The stages fill about decodeRingBudget bytes per block,
// so that two blocks share an SM of 227 KiB (H100, H200), between 2 and 8
// stages. The launch plan sizes the dynamic shared memory with it and the
// code generator derives the stage count from the launch, so both agree.
const (
	decodeRingBudget = 110 << 10
	decodeMinStages  = 2
	decodeMaxStages  = 8
	// DecodeTileKeys is the keys of one warp's tile.
	DecodeTileKeys = 16
	// smPerSMShared is the shared memory of an H100/H200 SM (bytes), and
	// blockReserved the part the driver keeps per block.
	smPerSMShared = 228 << 10
	blockReserved = 1 << 10
)

// decodeStageBytes is one warp's stage: 16 K rows and 16 V rows.
func decodeStageBytes(dh int64) int64 {
	dp := (dh + 15) / 16 * 16
	return 2 * DecodeTileKeys * (dp + 8) * 2
}

// decodeQueryBytes is the query tile after the ring.
func decodeQueryBytes(dh int64) int64 {
	dp := (dh + 15) / 16 * 16
	return DecodeTileKeys * (dp + 8) * 2
}

// DecodeRing is the decode kernel's ring at head dim dh and block threads:
// the stages per warp and the block's dynamic shared memory in bytes.
func DecodeRing(dh int64, block int) (stages, bytes int64) {
	warps := max(int64(block)/32, 1)
	st := decodeStageBytes(dh) * warps
	stages = min(max(decodeRingBudget/st, decodeMinStages), decodeMaxStages)
	return stages, stages*st + decodeQueryBytes(dh)
}

// DecodeStages is the stage count of a launch with sharedBytes of dynamic
// shared memory: 0 when that is not a whole ring of at least two stages.
func DecodeStages(dh int64, block int, sharedBytes int64) int64 {
	warps := max(int64(block)/32, 1)
	st := decodeStageBytes(dh) * warps
	ring := sharedBytes - decodeQueryBytes(dh)
	if ring <= 0 || ring%st != 0 || ring/st < decodeMinStages {
		return 0
	}
	return ring / st
}

// DecodeBlocksPerSM is how many decode blocks of that ring an H200 SM holds
// at once (at most 2: the registers of two 128-thread blocks at 255 each
// fill the register file).
func DecodeBlocksPerSM(dh int64, block int) int64 {
	_, bytes := DecodeRing(dh, block)
	return min(max(smPerSMShared/(bytes+blockReserved), 1), 2)
}
