package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// GEMM tile sizes: GEMV tiles are gemvTN columns (slots) for a
// K-contiguous right operand, gemvRowTN for any other layout (a
// lane streams 8 contiguous columns of a row, a warp 512 bytes of bf16); the left
// operand is staged gemvStaged/MR positions at a time for a pass of MR rows
// (a whole K split at one row, so that no stage stalls the weight stream
// mid-split); tensor-core tiles mmaBM ×
// mmaBN with a K step of mmaBK.
const (
	gemvTN    = 32
	gemvRowTN = plan.GemvCols
	// gemvMR is the most rows of a CUDA-core GEMV pass (a body without
	// the tensor-core GEMV; with it, a pass is one row).
	gemvMR = 8
	// gemvStaged is the positions of the left operand a pass stages, over
	// its rows: 4096 of one row, 512 of each of gemvMR rows.
	gemvStaged = 4096
	// gemvRowsInFlight is the rows of a row-major right operand a warp
	// loads before it uses them.
	gemvRowsInFlight = 8
	// gemvPrefetchRows is the weight rows (K positions) of its first tile a
	// GEMV block prefetches into L2 while the kernel before it finishes:
	// 64 KiB a block of 256 bf16 columns, 8.4 MB over 132 blocks, about
	// 2 µs of HBM, the order of a kernel's tail (a narrow tile prefetches
	// as many bytes, in more rows).
	gemvPrefetchRows = 128
	mmaBM            = plan.GemmTileM
	mmaBN            = plan.GemmTileN
	mmaBK            = 32
)

// batchKind says how an output batch axis of a matmul is computed.
type batchKind int

const (
	// foldAxis: the right operand does not depend on the axis, so its
	// entries are more rows of one GEMM (a 2-D weight shared by the batch).
	foldAxis batchKind = iota
	// unitAxis: each entry is its own GEMM.
	unitAxis
	// groupAxis: H query heads over G kv heads; H/G heads share one right
	// operand and become rows of one GEMM (GQA).
	groupAxis
)

type batchAxis struct {
	kind batchKind
	size poly
	grp  int64
}

// gemmModel is a matmul kernel's work decomposition: units (independent
// GEMMs, indexed by the unit coordinates) of Mr rows (row coordinates, the
// last being the matmul's M) by N columns, contracted over K.
type gemmModel struct {
	k          *kgen
	mm         *ir.Node
	a, b, o    *ir.Value
	os         []poly
	axes       []batchAxis
	unitSizes  []poly
	rowSizes   []poly
	m, n, kdim poly
	av, bv     *view
	// bN: the right operand's N axis is contiguous (a row-major weight);
	// bK: its K axis is (transposed keys, [N, K] weights).
	bN, bK  bool
	aK      bool
	epi     *epilogue
	kRagged *ir.Value // an operand whose contracted axis is ragged
	nRagged bool      // the result's N axis is ragged
	// pair is the packed token axis of a left operand [..., N, K] that
	// the matmul pairs with its sequences' right operands [B, ..., K,
	// M]: each token is a unit of its own (the last unit coordinate),
	// which reads the right operand of its sequence.
	pair *ir.Packed
	// counters and partials size a split-K launch's tile arrival counters
	// and its f32 partial sums, splits is its split count, the launch's
	// grid z (all zero without split-K).
	counters, partials, splits int64
	// narrow is the launch's GEMV tile width where it is narrower than
	// gemvRowTN (plan.Launch.Tile, a one-row GEMV that fills the SMs
	// with tiles instead of splitting K), 0 otherwise.
	narrow int
}

// epiNodes are the kernel's nodes after its matmul: its epilogue.
func (g *gemmModel) epiNodes() []*ir.Node { return g.k.pk.Nodes[1:] }

func (k *kgen) gemmModel() (*gemmModel, error) {
	mm := k.pk.Anchor()
	if mm.Op != ir.OpMatmul {
		return nil, fmt.Errorf("gemm kernel %s has no matmul", k.pk.Name)
	}
	g := &gemmModel{k: k, mm: mm, a: mm.Args[0], b: mm.Args[1], o: mm.Outs[0]}
	for _, v := range []*ir.Value{g.a, g.b} {
		if k.inKernel[v] {
			return nil, fmt.Errorf("gemm kernel %s: an operand is computed in the kernel", k.pk.Name)
		}
		if err := checkDType(v); err != nil {
			return nil, err
		}
	}
	g.os = shapeOf(g.o)
	r := len(g.os)
	as, bs := shapeOf(g.a), shapeOf(g.b)
	if p := g.a.Packed; p != nil && len(bs) == len(as)+1 {
		if _, err := k.packedSeq(p, ixc(0)); err != nil {
			return nil, err
		}
		g.pair = p
	}
	g.m, g.n, g.kdim = g.os[r-2], g.os[r-1], as[len(as)-1]
	for i := 0; i < r-2; i++ {
		size := g.os[i]
		ax := batchAxis{kind: foldAxis, size: size}
		if len(bs) > 2 {
			if j := i - (r - len(bs)); j >= 0 && !bs[j].isConst(1) {
				switch {
				case bs[j].equal(size):
					ax.kind = unitAxis
				default:
					q, ok := size.div(bs[j])
					n, okn := q.value()
					if !ok || !okn {
						return nil, fmt.Errorf("gemm kernel %s: batch axis %d does not group", k.pk.Name, i)
					}
					ax.kind, ax.grp = groupAxis, n
				}
			}
		}
		g.axes = append(g.axes, ax)
		switch ax.kind {
		case foldAxis:
			g.rowSizes = append(g.rowSizes, size)
		case unitAxis:
			g.unitSizes = append(g.unitSizes, size)
		case groupAxis:
			q, _ := size.div(pconst(ax.grp))
			g.unitSizes = append(g.unitSizes, q)
			g.rowSizes = append(g.rowSizes, pconst(ax.grp))
		}
	}
	if g.pair != nil {
		g.unitSizes = append(g.unitSizes, g.m)
	} else {
		g.rowSizes = append(g.rowSizes, g.m)
	}
	var err error
	if g.av, err = k.viewOf(g.a); err != nil {
		return nil, err
	}
	if g.bv, err = k.viewOf(g.b); err != nil {
		return nil, err
	}
	g.aK = g.av.contig(len(as) - 1)
	g.bN = g.bv.contig(len(bs) - 1)
	g.bK = !g.bN && g.bv.contig(len(bs)-2)
	if rg := g.a.Ragged; rg != nil && rg.Axis == len(as)-1 {
		g.kRagged = g.a
	}
	if rg := g.b.Ragged; rg != nil && rg.Axis == len(bs)-2 {
		g.kRagged = g.b
	}
	if rg := g.o.Ragged; rg != nil && rg.Axis == r-1 {
		g.nRagged = true
	}
	g.epi, err = newEpilogue(g)
	if err != nil {
		return nil, fmt.Errorf("gemm kernel %s: %w", k.pk.Name, err)
	}
	return g, nil
}

// units and rows are the unit count and the rows per unit.
func (g *gemmModel) units() ix { return ixp(numel(g.unitSizes)) }
func (g *gemmModel) rows() ix  { return ixp(numel(g.rowSizes)) }

// coords emits the output index (batch axes, m) of row r of unit ub as
// variables named prefix0, prefix1, ... and returns them; m is the unit's
// token where the matmul pairs packed tokens with their sequences.
func (g *gemmModel) coords(w *writer, prefix string, ub, r ix) []ix {
	uc := delin(ub, g.unitSizes)
	rc := delin(r, g.rowSizes)
	var out []ix
	ui, ri := 0, 0
	name := func(i int, x ix) ix {
		if x.k {
			return x
		}
		n := fmt.Sprintf("%s%d", prefix, i)
		w.line("const i64 %s = %s;", n, x)
		return ixv(n)
	}
	for i, ax := range g.axes {
		var x ix
		switch ax.kind {
		case foldAxis:
			x = rc[ri]
			ri++
		case unitAxis:
			x = uc[ui]
			ui++
		case groupAxis:
			x = ixAdd(ixMul(uc[ui], ixc(ax.grp)), rc[ri])
			ui++
			ri++
		}
		out = append(out, name(i, x))
	}
	if g.pair != nil {
		return append(out, name(len(g.axes), uc[ui]))
	}
	return append(out, name(len(g.axes), rc[ri]))
}

// operandIndex maps the output batch coordinates (batch, and the unit's
// token where the matmul pairs packed tokens with their sequences) to an
// operand's index, with m-or-k and k-or-n appended.
func (g *gemmModel) operandIndex(x *ir.Value, batch []ix, last2 [2]ix) []ix {
	xs := shapeOf(x)
	nb := len(xs) - 2
	idx := make([]ix, 0, len(xs))
	j0 := 0
	if x == g.b && g.pair != nil {
		seq, _ := g.k.packedSeq(g.pair, batch[len(g.axes)]) // its indptr named: gemmModel checked it
		idx = append(idx, seq)
		j0 = 1
	}
	shift := len(g.axes) - nb
	for j := j0; j < nb; j++ {
		i := j + shift
		ax := g.axes[i]
		switch {
		case xs[j].isConst(1) && !ax.size.isConst(1):
			idx = append(idx, ixc(0))
		case x == g.b && ax.kind == groupAxis:
			idx = append(idx, ixDiv(batch[i], ixc(ax.grp)))
		default:
			idx = append(idx, batch[i])
		}
	}
	return append(idx, last2[0], last2[1])
}

// unitBatch emits the unit's batch coordinates (rows set to 0), and its
// token where the matmul pairs packed tokens with their sequences, for
// addressing the right operand and the lengths of ragged axes.
func (g *gemmModel) unitBatch(w *writer, ub ix) []ix {
	c := g.coords(w, "ub", ub, ixc(0))
	return c[:g.unitCoords()]
}

// unitCoords is the length of unitBatch's coordinates.
func (g *gemmModel) unitCoords() int {
	if g.pair != nil {
		return len(g.axes) + 1
	}
	return len(g.axes)
}

// unitRow is the m index of the unit's rows where the unit is one
// token (unitBatch's last coordinate), else 0: the index along the
// left operand's and the result's M axis that picks a ragged axis's
// sequence.
func (g *gemmModel) unitRow(batch []ix) ix {
	if g.pair != nil {
		return batch[len(g.axes)]
	}
	return ixc(0)
}

// kLen is the contraction length of the unit: K, or the sequence's length
// when the contracted axis is ragged.
func (g *gemmModel) kLen(batch []ix) (ix, error) {
	kk := ixp(g.kdim)
	if g.kRagged == nil {
		return kk, nil
	}
	idx := g.operandIndex(g.kRagged, batch, [2]ix{g.unitRow(batch), ixc(0)})
	n, err := g.k.validLen(g.kRagged, idx)
	if err != nil {
		return ix{}, err
	}
	return ixMin(n, kk), nil
}

// nLen is the number of existing columns of the unit.
func (g *gemmModel) nLen(batch []ix) (ix, error) {
	nn := ixp(g.n)
	if !g.nRagged {
		return nn, nil
	}
	idx := append(append([]ix(nil), batch[:len(g.axes)]...), g.unitRow(batch), ixc(0))
	n, err := g.k.validLen(g.o, idx)
	if err != nil {
		return ix{}, err
	}
	return ixMin(n, nn), nil
}

// gemmKernel generates a Gemm kernel: one entry computing the matmul and
// its epilogue (GEMV tiles for up to plan.GemvMaxRows rows per unit, on
// tensor cores above plan.GemvCUDACoreRows where the tile allows it;
// tensor-core GEMM tiles for more; chosen at run time). A split-K GEMV
// reduces its splits in the same launch: the splits of a tile wait for
// each other and each sums a share of the partials.
func (k *kgen) gemmKernel() (*generated, error) {
	g, err := k.gemmModel()
	if err != nil {
		return nil, err
	}
	l := k.pk.Launch
	split := l != nil && l.Variant == plan.VariantGemv && l.Splits > 1
	if err := g.setNarrow(l); err != nil {
		return nil, err
	}
	if split {
		items, ok := g.maxItems(l)
		if !ok {
			return nil, fmt.Errorf("gemm kernel %s: split-K needs a constant column count", k.pk.Name)
		}
		g.counters, g.partials, g.splits = items, l.WorkspaceFloats, l.Splits
	}
	var helpers writer
	if err := g.emitHelpers(&helpers); err != nil {
		return nil, err
	}
	main, err := g.mainBody(split)
	if err != nil {
		return nil, err
	}
	gen := &generated{
		libs:     g.libs(),
		helpers:  helpers.String(),
		entries:  []entry{{"", main}},
		variants: map[plan.Variant][]string{plan.VariantGemv: {""}, plan.VariantGemm: {""}},
		variant:  plan.VariantGemv,
		waits:    true,
	}
	if l != nil && l.Variant == plan.VariantGemm {
		gen.variant = plan.VariantGemm
	}
	return gen, nil
}

// maxItems bounds the GEMV work items (unit, row chunk, column tile) of the
// launch: every item has at least one of the launch's rows, so units × row
// chunks is at most Grid[1] × Tile[0]. It needs a constant tile count.
func (g *gemmModel) maxItems(l *plan.Launch) (int64, bool) {
	tiles, ok := g.constTiles(g.gemvTN())
	return l.Grid[1] * l.Tile[0] * tiles, ok
}

// constTiles is the column tiles of tn slots over the epilogue's
// segments, false where the column count or a segment's tile count is
// bound at run time.
func (g *gemmModel) constTiles(tn int) (int64, bool) {
	n, ok := g.n.value()
	if !ok {
		return 0, false
	}
	var tiles int64
	for i := range g.epi.segs {
		t := g.epi.segs[i].tiles(tn, ixc(n))
		if !t.k {
			return 0, false
		}
		tiles += t.n
	}
	return tiles, true
}

// gemvTN is the GEMV tile's slot count: gemvTN when the right operand is
// K-contiguous (a warp per slot), else the launch's narrow width where it
// has one, gemvRowTN otherwise (a lane per 8 slots).
func (g *gemmModel) gemvTN() int {
	switch {
	case g.bK:
		return gemvTN
	case g.narrow > 0:
		return g.narrow
	}
	return gemvRowTN
}

// narrowRefusal says why the GEMV cannot take tiles narrower than
// gemvRowTN, or nil: a right operand that is not K-contiguous (whose
// tiles are rows of 8-column lane groups) and a constant column count.
func (g *gemmModel) narrowRefusal() error {
	if g.bK {
		return fmt.Errorf("the right operand %s is K-contiguous: its GEMV tiles are a warp a column", plan.Root(g.b).Ref())
	}
	if _, ok := g.n.value(); !ok {
		return fmt.Errorf("the column count of %s is bound at run time", g.o.Ref())
	}
	return nil
}

// setNarrow takes the narrow tile width of a GEMV launch l
// (plan.Launch.Tile[1] below gemvRowTN; GemvTiles chose it). A launch
// over a K-contiguous right operand has its tile's gemvTN slots (GemvCols).
func (g *gemmModel) setNarrow(l *plan.Launch) error {
	if l == nil || l.Variant != plan.VariantGemv || l.Tile[1] >= gemvRowTN || (g.bK && l.Tile[1] == gemvTN) {
		return nil
	}
	if err := g.narrowRefusal(); err != nil {
		return fmt.Errorf("gemm kernel %s: tiles of %d slots: %w", g.k.pk.Name, l.Tile[1], err)
	}
	if l.Tile[1]%plan.GemvNarrowStep != 0 || l.Tile[1] <= 0 || l.Splits > 1 {
		return fmt.Errorf("gemm kernel %s: tiles of %d slots over %d splits: a narrow tile is a multiple of %d slots, unsplit", g.k.pk.Name, l.Tile[1], l.Splits, plan.GemvNarrowStep)
	}
	g.narrow = int(l.Tile[1])
	return nil
}

// GemvCols is the column slots of the tile that gemm kernel pk of plan p
// (whose layouts are assigned) takes on its GEMV path, narrow tiles aside:
// gemvTN over a K-contiguous right operand (a warp a column, as PyTorch's
// Linear stores its weight), gemvRowTN over any other. The launch pass
// sizes the GEMV's grid by it, a block a tile.
func GemvCols(p *plan.Plan, pk *plan.Kernel) (int, error) {
	g, err := gemvModel(p, pk)
	if err != nil {
		return 0, err
	}
	return g.gemvTN(), nil
}

// gemvModel is the work decomposition of gemm kernel pk of plan p in
// blocks of 256 threads, as the launch pass asks about its GEMV path.
func gemvModel(p *plan.Plan, pk *plan.Kernel) (*gemmModel, error) {
	k, err := newKgen(p, pk, 256)
	if err != nil {
		return nil, err
	}
	return k.gemmModel()
}

// GemvTiles is the column tiles of tn slots that gemm kernel pk of plan p
// (whose layouts are assigned) takes on its one-row GEMV path: the launch
// pass asks it for the narrow tiles that fill the SMs without splitting
// K, and sizes the grid by the answer, which counts the epilogue's column
// groups (RoPE's and SwiGLU's pairs, the segments of a split) as the
// kernel enumerates them. An error says why the kernel takes no narrow
// tiles.
func GemvTiles(p *plan.Plan, pk *plan.Kernel, tn int) (int64, error) {
	g, err := gemvModel(p, pk)
	if err != nil {
		return 0, err
	}
	if err := g.narrowRefusal(); err != nil {
		return 0, err
	}
	tiles, ok := g.constTiles(tn)
	if !ok {
		return 0, fmt.Errorf("the tile count of %s's columns is bound at run time", g.o.Ref())
	}
	return tiles, nil
}

// workspacePerSplit is the f32 count of one split's partial results.
func (g *gemmModel) workspacePerSplit() poly {
	return numel(g.unitSizes).mul(numel(g.rowSizes)).mul(g.n)
}
