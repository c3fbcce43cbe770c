package plan

// The GEMM kernel's shape, shared by the launch pass (which picks the path
// and sizes the grid) and codegen/cuda (which writes the tiles).
const (
	// GemvMaxRows is the most rows per unit the GEMV path takes; more go to
	// the tensor-core tiles. One row runs on CUDA cores; 2 to 64 on tensor
	// cores where the tile allows it, the weight read once
	// (GemvSharedBytes).
	GemvMaxRows = 64
	// GemvCUDACoreRows is the most rows the GEMV runs on CUDA cores where
	// its tile allows the tensor cores.
	GemvCUDACoreRows = 1
	// GemvCols is the columns (slots) of a GEMV tile over a row-major right
	// operand: a lane streams 8 contiguous columns of a row, a warp 512
	// bytes of bf16. (A K-contiguous operand takes tiles of 32, a warp a
	// column.)
	GemvCols = 256
	// GemvNarrowStep is the step of the narrower tiles a one-row GEMV
	// takes instead of splitting K (its grid one tile a block, no join):
	// 16 slots, two 16-bit sectors of 32 bytes a row, whole RoPE and
	// SwiGLU pairs of 8-column groups; the narrowest tile is one step.
	GemvNarrowStep = 16
	// GemvBlockInFlight is the weight bytes a GEMV block of 256 threads
	// has in flight on CUDA cores: 16 rows of 16 bytes a thread (8 of 32
	// for f32). A block whose whole share of the weight fits is one round
	// trip, however few SMs the grid takes.
	GemvBlockInFlight = 64 << 10
	// GemmTileM × GemmTileN is the tensor-core tile.
	GemmTileM = 128
	GemmTileN = 64
)

// GemvSplitRows is the rows of K a split of a split-K GEMV takes: K over
// the splits, rounded up to whole 8-row groups. It is the Go twin of the
// device function fz_gemv_kper (codegen/cuda/device/gemv.cuh), which
// states the same arithmetic.
func GemvSplitRows(k, splits int64) int64 {
	return ((k+splits-1)/splits + 7) / 8 * 8
}

// GemvSplits is the split count a GEMV launch takes for a wanted count:
// the splits that GemvSplitRows' rows leave non-empty, so that no block of
// the grid runs an empty K range.
func GemvSplits(k, want int64) int64 {
	if want <= 1 || k <= 0 {
		return 1
	}
	rows := GemvSplitRows(k, want)
	return (k + rows - 1) / rows
}

// The tensor-core GEMV streams the weight through a ring of GemvRingStages
// stages (GemvWGStages with wgmma, which keeps one stage's wgmmas in
// flight and so refills a stage one step later) in dynamic shared memory, each GemvRingRows rows of K by GemvCols
// columns (16-bit) and the same positions of up to GemvMaxRows rows of the
// left operand. With mma.sync each row of the left operand is padded to
// GemvRingXRowBytes, so that the rows a B fragment reads lie in distinct
// banks; with wgmma the stage is in the operands' canonical layouts
// (codegen/cuda/device/gemv_wgmma.cuh): the rows unpadded, the weight tile
// 128-byte swizzled, so that the stages start GemvWGAlign-byte aligned.
const (
	GemvRingStages    = 6
	GemvWGStages      = 7
	GemvRingRows      = 32
	GemvRingXRowBytes = GemvRingRows*2 + 16
	// GemvRingStageBytes is one mma.sync stage: the weight tile, then the
	// rows.
	GemvRingStageBytes = GemvRingRows*GemvCols*2 + GemvMaxRows*GemvRingXRowBytes
	// GemvWGStageBytes is one wgmma stage, GemvWGAlign the alignment of
	// its start.
	GemvWGStageBytes = GemvRingRows*GemvCols*2 + GemvMaxRows*GemvRingRows*2
	GemvWGAlign      = 1024
)

// GemvSharedBytes is the dynamic shared memory of a GEMV launch of m rows
// a unit: the tensor-core ring above GemvCUDACoreRows rows (which its tile
// sums reuse once the ring is drained), none up to them; with wgmma, the
// ring and the bytes that align its start. The GEMV body (codegen/cuda)
// lays out the same bytes.
func GemvSharedBytes(m int64, wgmma bool) int64 {
	if m <= GemvCUDACoreRows {
		return 0
	}
	if wgmma {
		return GemvWGStages*GemvWGStageBytes + GemvWGAlign
	}
	return GemvRingStages * GemvRingStageBytes
}

// The wgmma GEMM on sm_90a (codegen/cuda's gemm_wgmma.go), a block of
// GemmWGThreads, takes tiles of GemmWGRows rows by GemvCols column slots
// and streams K through a ring of GemmWGStages stages of GemmWGK
// positions, the weight tile then the rows (GemmWGStageBytes): the weight
// in the wgmma GEMV's layout, the rows in it or, where the tensor copy
// engine fills the stage, a row's positions together, 128-byte swizzled; the
// ring starts GemvWGAlign-byte aligned, and the tile's f32 sums reuse it
// once it drains.
const (
	GemmWGThreads    = 256
	GemmWGRows       = 128
	GemmWGK          = 64
	GemmWGStages     = 4
	GemmWGStageBytes = GemmWGK*GemvCols*2 + GemmWGRows*GemmWGK*2
)

// GemmWGCluster is the blocks of a wgmma GEMM launch's clusters on a
// target with the tensor copy engine. A cluster's blocks run at once on
// neighbouring SMs, and the grid's consecutive blocks take consecutive row
// blocks of one column tile (fz_gemm_wg_item), so that the two copy the
// same weight stages at about the same time. Measured on the H200
// (bench/results/2026-12-04-h200-gemm-cluster), Llama-3-8B's gate/up GEMM
// at 4096 rows took 1890 µs without clusters and 1530 with them; the
// weight multicast to both blocks of a cluster instead, with the waits for
// the other block that it needs, took 2000.
const GemmWGCluster = 2

// A wgmma GEMM whose tiles leave SMs idle splits each tile's K over the
// blocks of a cluster (GemmWGSplits): a split multiplies its share of the
// stages, the cluster's blocks add their sums through distributed shared
// memory in split order, and each block runs the epilogue of its share of
// the tile's rows. The choice weighs a work item's time, in positions of
// K: its share of K, GemmWGItemFixed for the ring's fill and the
// epilogue, and for a split tile GemmWGSplitReduce for the exchange of its
// sums and GemmWGSplitPercent of its share's time (with every SM of the
// grid streaming stages, each is fed more slowly). A split takes at least
// GemmWGSplitMinK positions. Measured on an H100 at 512 tokens
// (bench/results/2026-12-06-gemm-splitk), two splits took the
// Llama-3-8B prefill's O projection (64 tiles) from 59.8 to 42.2 µs and
// down (64 tiles, K 14336) from 180 to 111, and gate/up (448 tiles: seven
// rounds of 66 clusters against four of 132 blocks) from 237 to 253;
// these constants keep the first two split and the third not.
const (
	GemmWGItemFixed    = 256
	GemmWGSplitReduce  = 128
	GemmWGSplitPercent = 115
	GemmWGSplitMinK    = 256
)

// GemmWGSplitCounts are the split counts the wgmma GEMM takes: each
// divides GemmWGRows into row shares of whole warps' rows (8), and the
// described targets have slots for clusters of each.
var GemmWGSplitCounts = []int64{1, 2}

// GemmWGSplitCost is the modelled time of a wgmma GEMM launch of tiles
// work items over k positions on t in s splits: rounds of resident
// clusters times an item's positions (see GemmWGItemFixed); ok is false
// where the target has no slots for such clusters or a split would take
// fewer than GemmWGSplitMinK positions.
func GemmWGSplitCost(t Target, tiles, k, s int64) (rounds, item int64, ok bool) {
	slots := t.ResidentClusters(s)
	if slots <= 0 || tiles <= 0 || s < 1 || (s > 1 && k < s*GemmWGSplitMinK) {
		return 0, 0, false
	}
	item = (k+s-1)/s + GemmWGItemFixed
	if s > 1 {
		item = (k+s-1)/s*GemmWGSplitPercent/100 + GemmWGItemFixed + GemmWGSplitReduce
	}
	return (tiles + slots - 1) / slots, item, true
}

// GemmWGTailCost is the modelled time of a wgmma GEMM launch of tiles
// work items over k positions on t that runs whole rounds of unsplit
// tiles on every block of its clusters of GemmWGCluster and splits the
// tiles left, one cluster each: the rounds times an unsplit item's
// positions and a split item's (GemmWGSplitCost). ok is false where
// there are no whole rounds, no tiles left, more tiles left than
// clusters, or no split of k.
func GemmWGTailCost(t Target, tiles, k int64) (cost int64, ok bool) {
	clusters := t.ResidentClusters(GemmWGCluster)
	blocks := clusters * GemmWGCluster
	_, item, ok1 := GemmWGSplitCost(t, tiles, k, 1)
	_, split, ok2 := GemmWGSplitCost(t, tiles, k, GemmWGCluster)
	if !ok1 || !ok2 || blocks <= 0 {
		return 0, false
	}
	rounds, left := tiles/blocks, tiles%blocks
	if rounds == 0 || left == 0 || left > clusters {
		return 0, false
	}
	return rounds*item + split, true
}

// GemmWGSplits is the split count of a wgmma GEMM launch of tiles work
// items over k positions on t, the clusters of that many blocks its
// persistent grid takes, and whether it splits only its last round's
// tiles: the least of GemmWGSplitCost over GemmWGSplitCounts and
// GemmWGTailCost (ties to fewer splits, then to splitting every tile).
// One split takes a block an SM, at most one a tile; a split last round
// takes clusters of GemmWGCluster blocks (the split count) on every SM.
func GemmWGSplits(t Target, tiles, k int64) (splits, clusters int64, tail bool) {
	splits, clusters = 1, min(tiles, t.SMs)
	best := int64(-1)
	for _, s := range GemmWGSplitCounts {
		rounds, item, ok := GemmWGSplitCost(t, tiles, k, s)
		if !ok {
			continue
		}
		if cost := rounds * item; best < 0 || cost < best {
			best, splits, clusters = cost, s, min(tiles, t.ResidentClusters(s))
		}
	}
	if cost, ok := GemmWGTailCost(t, tiles, k); ok && cost < best {
		return GemmWGCluster, t.ResidentClusters(GemmWGCluster), true
	}
	return splits, clusters, false
}

// GemmWGFull is the work items of a split wgmma GEMM launch of blocks
// blocks, whole clusters of s, that run unsplit, a block each, before the
// rest split over its clusters, nit items in all; paired says the launch
// is in clusters of s blocks (else none splits), and tail that only its
// last round splits (Launch.SplitTail): its whole rounds of blocks, if
// the items left are no more than its clusters, else all. The device
// twin is fz_gemm_wg_full (codegen/cuda/device/gemm_wgmma.cuh).
func GemmWGFull(nit, blocks, s int64, tail, paired bool) int64 {
	if !paired {
		return nit
	}
	if !tail {
		return 0
	}
	last := nit / blocks * blocks
	if (nit-last)*s > blocks {
		return nit
	}
	return last
}

// GemmWGWork is the item of work index wi of such a launch and the
// blocks that take it: below full, item wi, a block alone; past it, item
// full + (wi - full) / s, split over s blocks. The device twin is
// fz_gemm_wg_work.
func GemmWGWork(wi, full, s int64) (item, splits int64) {
	if wi < full {
		return wi, 1
	}
	return full + (wi-full)/s, s
}

// GemmWGSharedBytes is the dynamic shared memory of a wgmma GEMM launch:
// the ring and the bytes that align its start.
func GemmWGSharedBytes() int64 {
	return GemmWGStages*GemmWGStageBytes + GemvWGAlign
}
