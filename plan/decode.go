package plan

// Decode attention's shared-memory ring (codegen/cuda's fz_att_decode):
// each warp of the block streams tiles of 16 keys of K and V through its own
// ring of stages, rows of the head dim rounded up to 16 plus 8 elements of
// padding, 16-bit; after the ring, the block's 16 query rows in the same
// row format. The stages fill about decodeRingBudget bytes per block,
// so that two blocks share an SM of 228 KiB (H100, H200), between 2 and 8
// stages. The launch plan sizes the dynamic shared memory with it and the
// code generator derives the stage count from the launch, so both agree.
const (
	decodeRingBudget = 110 << 10
	decodeMinStages  = 2
	decodeMaxStages  = 8
	// DecodeTileKeys is the keys of one warp's tile.
	DecodeTileKeys = 16
	// DecodeMaxRows is the most query rows a kv head's decode attention
	// takes (queries × heads sharing the kv head: the 16 rows of its MMA
	// tile); more run as prefill.
	DecodeMaxRows = 16
	// blockReserved is the shared memory the driver keeps per block.
	blockReserved = 1 << 10
	// decodeStatic bounds the kernel's static shared memory (the tensor
	// map, the stage barriers, each warp's ring of page-table entries:
	// under 5 KiB at 8 stages), which shares the block's limit with the
	// dynamic ring.
	decodeStatic = 8 << 10
	// decodeRegsPerThread bounds the decode kernel's registers a thread
	// (its launch bounds allow 255, rounded to the allocation unit).
	decodeRegsPerThread = 256
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

// decodeBlockStage is one stage of a block's ring: a stage for each warp.
func decodeBlockStage(dh int64, block int) int64 {
	return decodeStageBytes(dh) * max(int64(block)/32, 1)
}

// decodeRingIn is the ring of as many stages as budget bytes hold, between
// the minimum and the maximum, and its block's dynamic shared memory.
func decodeRingIn(dh int64, block int, budget int64) (stages, bytes int64) {
	st := decodeBlockStage(dh, block)
	stages = min(max(budget/st, decodeMinStages), decodeMaxStages)
	return stages, stages*st + decodeQueryBytes(dh)
}

// DecodeRing is the decode kernel's ring at head dim dh and block threads:
// the stages per warp and the block's dynamic shared memory in bytes.
func DecodeRing(dh int64, block int) (stages, bytes int64) {
	return decodeRingIn(dh, block, decodeRingBudget)
}

// DecodeRingSolo is the ring of a decode launch whose blocks all fit one
// to an SM of t: as many stages as a block's shared memory holds (up to
// the maximum), so that a warp's tiles of a short split are all in flight
// at once. Stages 0 (and bytes 0) when it holds fewer than the minimum
// (head dims past 128 at 8 warps), which no launch can take.
func DecodeRingSolo(t Target, dh int64, block int) (stages, bytes int64) {
	budget := min(t.SharedPerSM-blockReserved, t.SharedPerBlock) - decodeStatic - decodeQueryBytes(dh)
	if budget/decodeBlockStage(dh, block) < decodeMinStages {
		return 0, 0
	}
	return decodeRingIn(dh, block, budget)
}

// DecodeStages is the stage count of a launch with sharedBytes of dynamic
// shared memory: 0 when that is not a whole ring of at least two stages.
func DecodeStages(dh int64, block int, sharedBytes int64) int64 {
	st := decodeBlockStage(dh, block)
	ring := sharedBytes - decodeQueryBytes(dh)
	if ring <= 0 || ring%st != 0 || ring/st < decodeMinStages {
		return 0
	}
	return ring / st
}

// DecodeBlocksPerSM is how many decode blocks of that ring an SM of t
// holds at once: as many as its shared memory takes, at most as many as
// its registers take at 255 a thread (2 blocks of 128 threads on 64K
// registers).
func DecodeBlocksPerSM(t Target, dh int64, block int) int64 {
	_, bytes := DecodeRing(dh, block)
	byRegs := t.RegistersPerSM / (decodeRegsPerThread * int64(block))
	return min(max(t.SharedPerSM/(bytes+blockReserved), 1), max(byRegs, 1))
}
