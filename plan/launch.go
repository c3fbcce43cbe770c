package plan

import "fmt"

// Launch is a kernel's launch shape at bound dims.
type Launch struct {
	Grid  [3]int64
	Block int
	// SharedBytes is the dynamic shared memory per block.
	SharedBytes int64
	// Launches is how many kernel launches the kernel takes: 2 for a
	// split-K GEMV (partial sums, then the reduction) and for cascade decode
	// attention (the prefix pass, then the decode kernel merging it), 1
	// otherwise (split-KV decode attention merges in the same launch).
	Launches int
	// Variant says which path of a strategy runs: "gemv", "gemm",
	// "prefill", "decode".
	Variant string
	// Splits is the split-KV count of decode attention, or the split-K count
	// of a GEMV; 1 when there is no split.
	Splits int64
	// SplitKeys is decode attention's fixed split size in keys
	// (deterministic mode), 0 when each context is divided evenly over
	// Splits.
	SplitKeys int64
	// PrefixSplits is the split count of a cascade decode's prefix pass
	// (see the function PrefixSplits), whose partials the decode launch
	// merges with its own splits'; 0 without one.
	PrefixSplits int64
	// Tile is the tile of a tiled kernel: Br×Bc for attention, M×N for GEMM.
	Tile [2]int64
}

// String prints the launch as grid(x,y,z)×block.
func (l *Launch) String() string {
	s := fmt.Sprintf("%s grid(%d,%d,%d)x%d", l.Variant, l.Grid[0], l.Grid[1], l.Grid[2], l.Block)
	if l.Splits > 1 {
		s += fmt.Sprintf(" splits=%d", l.Splits)
	}
	if l.SplitKeys > 0 {
		s += fmt.Sprintf(" split-keys=%d", l.SplitKeys)
	}
	if l.PrefixSplits > 0 {
		s += fmt.Sprintf(" prefix-splits=%d", l.PrefixSplits)
	}
	return s
}
