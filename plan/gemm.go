package plan

// The GEMM kernel's shape, shared by the launch pass (which picks the path
// and sizes the grid) and codegen/cuda (which writes the tiles).
const (
	// GemvMaxRows is the most rows per unit the GEMV path takes; more go to
	// the tensor-core tiles.
	GemvMaxRows = 16
	// GemvCols is the columns (slots) of a GEMV tile over a row-major right
	// operand: a lane streams 8 contiguous columns of a row, a warp 512
	// bytes of bf16. (A K-contiguous operand takes tiles of 32, a warp a
	// column.)
	GemvCols = 256
	// GemmTileM × GemmTileN is the tensor-core tile.
	GemmTileM = 128
	GemmTileN = 64
)

// GemvSplitRows is the rows of K a split of a split-K GEMV takes: K over
// the splits, rounded up to whole 8-row groups. It is the Go twin of the
// GEMV body's device function <body>_kper (codegen/cuda), which states the
// same arithmetic.
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
