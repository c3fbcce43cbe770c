package plan

import "fmt"

// MaxGridYZ is the most blocks a CUDA grid takes along y or z. The GEMM
// kernels stride over their work items with whatever grid they get, so
// a launch of more units than this takes this many.
const MaxGridYZ = 65535

// Launch is a kernel's configuration at bound dims, computed once by the
// launch pass and read by the cost model, the code generators and the
// interpreter alike.
type Launch struct {
	Grid  [3]int64
	Block int
	// SharedBytes is the dynamic shared memory per block.
	SharedBytes int64
	// Launches is how many kernel launches the kernel takes: 2 for the
	// CUDA-core split-KV decode attention (partials, then the merge) and for
	// cascade decode attention (the prefix pass, then the decode kernel
	// merging it), 1 otherwise (the tensor-core split-KV attention and the
	// split-K GEMV reduce in the same launch).
	Launches int
	// Variant says which path of a strategy runs.
	Variant Variant
	// Splits is the split-KV count of decode attention, or the split-K count
	// of a GEMV or of the wgmma GEMM (over the blocks of a cluster, Cluster
	// the same count: GemmWGSplits); 1 when there is no split.
	Splits int64
	// SplitTail: the wgmma GEMM splits only the tiles past its whole
	// rounds of Grid[0] blocks (its last round), each over a cluster of
	// Splits blocks; the others run unsplit, a block each (GemmWGSplits).
	SplitTail bool `json:",omitempty"`
	// SplitKeys is decode attention's fixed split size in keys
	// (deterministic mode), 0 when each context is divided evenly over
	// Splits.
	SplitKeys int64
	// PrefixSplits is the split count of a cascade decode's prefix pass
	// (see the function PrefixSplits), whose partials the decode launch
	// merges with its own splits'; 0 without one.
	PrefixSplits int64
	// Tile is the tile of a tiled kernel: Br×Bc for attention, M×N for
	// GEMM (rows × column slots for a GEMV).
	Tile [2]int64
	// Stages is the shared-memory ring depth of tensor-core decode
	// attention (DecodeStages of SharedBytes), of the wgmma prefill
	// attention (PrefillWG) and of the wgmma GEMM (GemmWGStages), 0 for
	// other variants.
	Stages int64 `json:",omitempty"`
	// WorkspaceFloats is the f32 scratch the kernel's partials take at this
	// launch: a GEMV's split-K sums, which its body declares, or the
	// split-KV partials and their counters, whose module workspace is the
	// largest of its attention kernels'.
	WorkspaceFloats int64 `json:",omitempty"`
	// Dependent: the kernel is launched as a programmatic dependent of the
	// kernel before it (Target.DependentLaunch).
	Dependent bool `json:",omitempty"`
	// Cluster is the blocks of a thread-block cluster along the grid's x
	// (Grid[0] a multiple of it), 0 for a launch without clusters: the
	// wgmma GEMM's pairs of blocks (GemmWGCluster) or its split-K
	// clusters (Splits).
	Cluster int64 `json:",omitempty"`
	// WGMMA: the GEMV's tensor-core path (more than GemvCUDACoreRows rows)
	// issues wgmma from shared memory (Target.WGMMA), not mma.sync; a
	// gemm launch takes the wgmma GEMM, a prefill launch the wgmma
	// attention (PrefillWG).
	WGMMA bool `json:",omitempty"`
	// Persistent: the wgmma prefill attention's blocks, one an SM, take
	// its (query tile, head, sequence) items in turn (a block an item
	// otherwise).
	Persistent bool `json:",omitempty"`
}

// String prints the launch as grid(x,y,z)×block.
func (l *Launch) String() string {
	s := fmt.Sprintf("%s grid(%d,%d,%d)x%d", l.Variant, l.Grid[0], l.Grid[1], l.Grid[2], l.Block)
	if l.Variant == VariantGemv && l.Tile[1] > 0 && l.Tile[1] < GemvCols {
		s += fmt.Sprintf(" cols=%d", l.Tile[1])
	}
	if l.Splits > 1 {
		s += fmt.Sprintf(" splits=%d", l.Splits)
		if l.SplitTail {
			s += " tail"
		}
	}
	if l.SplitKeys > 0 {
		s += fmt.Sprintf(" split-keys=%d", l.SplitKeys)
	}
	if l.PrefixSplits > 0 {
		s += fmt.Sprintf(" prefix-splits=%d", l.PrefixSplits)
	}
	if l.Cluster > 1 {
		s += fmt.Sprintf(" cluster=%d", l.Cluster)
	}
	if l.Dependent {
		s += " dependent"
	}
	if l.WGMMA {
		s += " wgmma"
	}
	if l.Persistent {
		s += " persistent"
	}
	return s
}
