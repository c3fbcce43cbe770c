package passes

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// Launch-plan constants. GEMV blocks own plan.GemvCols output columns
// (codegen's tile over a K-contiguous weight: Options.GemvCols; narrower
// tiles at one row: gemvNarrow) and split K while the grid fits
// the SMs one block each (the kernel, with its tensor-core path, holds
// one block an SM), each split at least gemvMinSplitK rows; GEMM grids
// give a block to gemmBlockCols columns and plan.GemmTileM rows (the
// kernel's blocks stride over its plan.GemmTileM × plan.GemmTileN tiles).
const (
	gemvBlock     = 256
	gemvMinSplitK = 64
	gemmBlock     = 384
	gemmBlockCols = 128
	elemBlock     = 256
	elemPerThread = 8
)

// launch sizes every kernel's grid at the bound dims and fixes its
// configuration (variant, tiles, splits, ring stages, workspace) for the
// cost model, the code generators and the interpreter. Decode attention
// (few queries per kv head) gets a split-KV count from batch × kv-heads ×
// context against the target's SMs: no split when the (sequence, kv-head)
// pairs already fill the GPU, more splits for long contexts at small batch.
//
// With Target.DependentLaunch every kernel but the first of the step (and
// of the load stage) is a programmatic dependent of the one before it: it
// starts while that one finishes.
func launch(s *State) (int, error) {
	var prev *plan.Kernel
	for _, k := range s.Plan.Kernels {
		l, err := launchOf(s, k)
		if err != nil {
			return 0, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		l.Dependent = s.Target.DependentLaunch && prev != nil && prev.Load == k.Load
		k.Launch = l
		prev = k
	}
	return len(s.Plan.Kernels), nil
}

func launchOf(s *State, k *plan.Kernel) (*plan.Launch, error) {
	eval := s.dim
	first := k.Nodes[0]
	switch k.Strategy {
	case plan.Gemm:
		return gemmLaunch(s, k, eval), nil
	case plan.Attention:
		return attentionLaunch(s, k, eval), nil
	case plan.Row:
		rows := int64(1)
		for _, d := range rowDomain(first) {
			rows *= eval(d)
		}
		return &plan.Launch{Variant: plan.VariantRow, Grid: [3]int64{rows, 1, 1}, Block: elemBlock, Launches: 1, Splits: 1}, nil
	}
	v, err := plan.StrategyVariant(k.Strategy)
	if err != nil {
		return nil, err
	}
	elems, err := first.Outs[0].Type.Shape.NumElements().Eval(s.Dims)
	if err != nil {
		return nil, err
	}
	if first.Op.Kind() == ir.KindAppend {
		elems, _ = first.Args[1].Type.Shape.NumElements().Eval(s.Dims)
	}
	return &plan.Launch{Variant: v, Grid: [3]int64{max(1, ceilDiv(elems, elemBlock*elemPerThread)), 1, 1}, Block: elemBlock, Launches: 1, Splits: 1}, nil
}

// gemmLaunch picks the GEMV path (up to plan.GemvMaxRows rows, split-K
// when the column blocks leave SMs idle) or the tensor-core tiles: the
// wgmma GEMM on a target with wgmma for 16-bit operands that codegen's
// wgmma GEMM takes (Options.GemmWGMMA), the mma.sync tiles otherwise, a
// refusal logged.
func gemmLaunch(s *State, k *plan.Kernel, eval func(ir.Dim) int64) *plan.Launch {
	mm := k.Anchor()
	a, out := mm.Args[0].Type.Shape, mm.Outs[0].Type.Shape
	n, kk := eval(out[len(out)-1]), eval(a[len(a)-1])
	m, batch := gemmRows(mm, eval)
	if m > plan.GemvMaxRows {
		wg := s.Target.WGMMA && wgmmaOperands(mm)
		if wg && s.gemmWGMMA != nil {
			if err := s.gemmWGMMA(s.Plan, k); err != nil {
				wg = false
				s.explain(false, "%s on the wgmma GEMM: %v; the mma.sync tiles run it", k.Name, err)
			}
		}
		if wg {
			// A persistent grid, one block an SM (its ring takes the
			// shared memory): as many blocks as its tiles of GemmWGRows
			// rows by GemvCols columns, at most the SMs; where the tiles
			// leave SMs idle, K split over the blocks of clusters, for
			// every tile or for the last round's (GemmWGSplits);
			// unsplit with the copy engine, clusters of
			// GemmWGCluster. (The kernel's other paths, which a launch
			// takes when the operands fail its checks at run time,
			// stride over their own tiles with these blocks.)
			tiles := batch * ceilDiv(m, plan.GemmWGRows) * ceilDiv(n, plan.GemvCols)
			split, clusters, tail := plan.GemmWGSplits(s.Target, tiles, kk)
			explainGemmWGSplit(s, k, tiles, kk, split, tail)
			l := &plan.Launch{Variant: plan.VariantGemm, Grid: [3]int64{clusters * split, 1, 1}, Block: plan.GemmWGThreads, SharedBytes: plan.GemmWGSharedBytes(), Launches: 1, Splits: split, SplitTail: tail, Tile: [2]int64{plan.GemmWGRows, plan.GemvCols}, Stages: plan.GemmWGStages, WGMMA: true}
			if split > 1 {
				l.Cluster = split
			} else if c := int64(plan.GemmWGCluster); s.Target.TMA && s.Target.ResidentClusters(c) > 0 {
				l.Cluster = c
				l.Grid[0] = min(ceilDiv(l.Grid[0], c), s.Target.ResidentClusters(c)) * c
			}
			return l
		}
		return &plan.Launch{Variant: plan.VariantGemm, Grid: [3]int64{ceilDiv(n, gemmBlockCols), ceilDiv(m, plan.GemmTileM), min(batch, plan.MaxGridYZ)}, Block: gemmBlock, Launches: 1, Splits: 1, Tile: [2]int64{plan.GemmTileM, plan.GemmTileN}}
	}
	// Split K when the column tiles leave SMs idle; the splits of a tile
	// share its reduction in the same launch, waiting for each other, so
	// the grid stays within one block an SM (all resident at once). A column count bound only
	// at run time (a ragged N) is not split.
	cols := int64(plan.GemvCols)
	if s.gemvCols != nil {
		c, err := s.gemvCols(s.Plan, k)
		if err != nil {
			s.explain(false, "%s: no GEMV tile width from codegen: %v; tiles of %d columns", k.Name, err, cols)
		} else {
			cols = int64(c)
		}
	}
	blocks := ceilDiv(n, cols) * batch
	split := int64(1)
	if _, constN := out[len(out)-1].Value(); constN && 2*blocks <= s.Target.SMs {
		if m <= plan.GemvCUDACoreRows {
			if l := gemvNarrow(s, k, batch, m, kk*mm.Args[1].Type.DType.Size()); l != nil {
				return l
			}
		}
		split = plan.GemvSplits(kk, max(1, min(s.Target.SMs/blocks, kk/gemvMinSplitK)))
	}
	// The tensor-core GEMV's rings copy tiles of plan.GemvCols columns of
	// a row-major weight; a kernel of other tiles takes no ring.
	ring := cols == plan.GemvCols
	wgmma := s.Target.WGMMA && m > plan.GemvCUDACoreRows && ring
	shared := int64(0)
	if ring {
		shared = plan.GemvSharedBytes(m, wgmma)
	}
	l := &plan.Launch{Variant: plan.VariantGemv, Grid: [3]int64{ceilDiv(n, cols), min(batch, plan.MaxGridYZ), split}, Block: gemvBlock, SharedBytes: shared, Launches: 1, Splits: split, Tile: [2]int64{m, cols}, WGMMA: wgmma}
	if split > 1 {
		// One f32 partial per split, unit (the grid's batch), row and column.
		l.WorkspaceFloats = split * l.Grid[1] * l.Tile[0] * n
	}
	return l
}

// gemmRows is the rows of one GEMM of matmul mm and the GEMMs' count
// (units), as the kernel counts them (codegen/cuda's gemmModel): a batch
// axis the right operand lacks or broadcasts folds into the rows (a 2-D
// weight is shared by every row), one it has is a unit, and H query heads
// over G kv heads are G units of H/G row groups. Packed tokens paired with
// their sequences' right operands ([..., N, K] @ [B, ..., K, M]) are a
// unit each.
func gemmRows(mm *ir.Node, eval func(ir.Dim) int64) (m, units int64) {
	a, b, out := mm.Args[0].Type.Shape, mm.Args[1].Type.Shape, mm.Outs[0].Type.Shape
	m, units = eval(a[len(a)-2]), 1
	if mm.Args[0].Packed != nil && len(b) == len(a)+1 {
		m, units = 1, m
	}
	r := len(out)
	for i, d := range out[:r-2] {
		size := eval(d)
		j := i - (r - len(b))
		switch {
		case len(b) <= 2 || j < 0 || eval(b[j]) == 1:
			m *= size
		case eval(b[j]) == size:
			units *= size
		default:
			m *= size / max(eval(b[j]), 1)
			units *= eval(b[j])
		}
	}
	return m, units
}

// gemvNarrow is the launch of a one-row GEMV whose tiles of
// plan.GemvCols columns would leave half the SMs idle: the narrowest
// tiles, in steps of plan.GemvNarrowStep slots, whose count (codegen's,
// Options.GemvTiles) fits the SMs a block each, where a tile's whole
// share of the weight is in flight at once (a small weight: one round
// trip a block, and no split to join). colBytes is a weight column's
// bytes over K. It is nil where codegen takes no narrow tiles, and where
// a block's share is more than it has in flight: such a block streams a
// strip of the weight a few sectors wide row after row, which ran at
// 40-60% of the copy ceiling where split-K's 256-column tiles ran at
// 80-90% (Llama-3-8B's B1 QKV, O and down projections on the H100,
// bench/results/2026-12-07-decode/), so split-K takes it.
func gemvNarrow(s *State, k *plan.Kernel, batch, m, colBytes int64) *plan.Launch {
	if s.gemvTiles == nil {
		return nil
	}
	for tn := int64(plan.GemvNarrowStep); tn < plan.GemvCols; tn += plan.GemvNarrowStep {
		tiles, err := s.gemvTiles(s.Plan, k, int(tn))
		if err != nil {
			s.explain(false, "%s: no narrow GEMV tiles: %v", k.Name, err)
			return nil
		}
		blocks := tiles * batch
		if blocks > s.Target.SMs {
			continue
		}
		share := tn * colBytes
		if share > plan.GemvBlockInFlight {
			s.explain(false, "%s: %d GEMV tiles of %d slots would each stream %d bytes of weight, more than a block has in flight; K is split", k.Name, blocks, tn, share)
			return nil
		}
		s.explain(true, "%s: %d GEMV tiles of %d slots, each %d bytes of weight, all in flight at once: K unsplit", k.Name, blocks, tn, share)
		return &plan.Launch{Variant: plan.VariantGemv, Grid: [3]int64{tiles, batch, 1}, Block: gemvBlock, SharedBytes: plan.GemvSharedBytes(m, false), Launches: 1, Splits: 1, Tile: [2]int64{m, tn}}
	}
	return nil
}

func ceilDiv(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// wgmmaOperands reports whether a matmul's operands are what the wgmma
// GEMM multiplies: both bf16 or both f16.
func wgmmaOperands(mm *ir.Node) bool {
	dt := mm.Args[0].Type.DType
	return dt == mm.Args[1].Type.DType && (dt == ir.BF16 || dt == ir.F16)
}

// explainGemmWGSplit records the wgmma GEMM's split choice for kernel k
// of tiles items over kk positions where the tiles leave SMs idle in their
// last round and a split was possible: the rounds and item sizes
// (plan.GemmWGSplitCost) of one split and of two, and the cost of
// splitting the last round only (plan.GemmWGTailCost) where it applies.
func explainGemmWGSplit(s *State, k *plan.Kernel, tiles, kk, split int64, tail bool) {
	r1, i1, ok1 := plan.GemmWGSplitCost(s.Target, tiles, kk, 1)
	r2, i2, ok2 := plan.GemmWGSplitCost(s.Target, tiles, kk, 2)
	if !ok1 || !ok2 || tiles%s.Target.SMs == 0 {
		return
	}
	what := "K unsplit"
	switch {
	case tail:
		what = fmt.Sprintf("K split over clusters of %d in the last round", split)
	case split > 1:
		what = fmt.Sprintf("K split over clusters of %d", split)
	}
	last := "no split last round"
	if c, ok := plan.GemmWGTailCost(s.Target, tiles, kk); ok {
		last = fmt.Sprintf("split last round %d", c)
	}
	s.explain(split > 1, "%s: %d tiles for %d SMs, %s (rounds × an item's positions: unsplit %d × %d, two splits %d × %d; %s)", k.Name, tiles, s.Target.SMs, what, r1, i1, r2, i2, last)
}
