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
