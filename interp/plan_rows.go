package interp

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// rowOperand is an operand of a row-kernel op: a value of the kernel, which
// exists one row at a time, or a tensor read from memory (through views),
// broadcast over the rows.
type rowOperand struct {
	local *ir.Value
	t     *Tensor
	// st is the tensor's stride along each row axis (0 where it is
	// stretched); width its extent along the row (1 when stretched).
	st    []int
	width int
}

// row returns the operand's values for the row at multi-index idx.
func (a *rowOperand) row(idx []int, bufs map[*ir.Value][]float64) []float64 {
	if a.local != nil {
		return bufs[a.local]
	}
	base := 0
	for i, x := range idx {
		base += x * a.st[i]
	}
	return a.t.Data[base : base+a.width]
}

// rowStep is one op of a row kernel.
type rowStep struct {
	n      *ir.Node
	shape  []int // the result's shape: the rows, then the row
	width  int
	args   []rowOperand
	vdOut  *validity // the result's existing positions
	vdArg  *validity // the first operand's (reductions and masks)
	window int
	// pos is a mask's query place among its sequence's and their count
	// (machine.queryPos).
	pos func(i int) (int, int)
	out *Tensor // the whole result, when the kernel writes it
}

// rowKernelOp reports whether the one-pass row algorithm computes op.
func rowKernelOp(n *ir.Node) bool {
	switch n.Op {
	case ir.OpNeg, ir.OpExp, ir.OpLog, ir.OpSqrt, ir.OpRsqrt, ir.OpTanh, ir.OpSilu, ir.OpGelu, ir.OpSigmoid, ir.OpSoftcap, ir.OpCast,
		ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMax, ir.OpMin, ir.OpCausal, ir.OpWindow:
		return true
	case ir.OpSum, ir.OpReduceMax, ir.OpMean, ir.OpSoftmax, ir.OpTopK:
		return n.Attr.Axis == len(n.Args[0].Type.Shape)-1
	}
	return false
}

// rows computes a row kernel with the one-pass-per-row algorithm of the
// generated kernels: every op's result is one row of the rows (all axes but
// the last) the kernel shares; for each row, the ops run in order on that
// row only (the element-wise ops leading to a row reduction, the reduction
// accumulating over the row, the element-wise ops reading its result, and
// so on for each reduction), and only the kernel's outputs are stored
// whole. It reports false, computing nothing, for a kernel outside that
// form (an op of another kind, a reduction after one that keeps the whole
// row, results over different rows, an operand that is a view of a value
// of the kernel); RunPlan then computes it op by op.
func (kr *kernelRun) rows() (bool, error) {
	nodes := kr.k.Nodes
	var dom []int
	// whole: a reduction of the kernel so far keeps the whole row (softmax,
	// top-k); only per-row statistics (sum, mean, max) may come before
	// another reduction, as in the generated kernels.
	whole := false
	steps := make([]*rowStep, len(nodes))
	for i, n := range nodes {
		if len(n.Outs) != 1 || !rowKernelOp(n) {
			return false, nil
		}
		shape, err := kr.m.shape(n.Outs[0])
		if err != nil {
			return false, err
		}
		if len(shape) == 0 {
			return false, nil
		}
		if i == 0 {
			dom = shape[:len(shape)-1]
		} else if !equalInts(shape[:len(shape)-1], dom) {
			return false, nil
		}
		if n.Op.Info().Pattern == ir.Reduction {
			if whole {
				return false, nil
			}
			whole = shape[len(shape)-1] != 1
		}
		steps[i] = &rowStep{n: n, shape: shape, width: shape[len(shape)-1]}
	}
	// The operands: the kernel's own values, or tensors read from memory.
	for _, s := range steps {
		whole := s.n.Op.Info().Pattern == ir.Reduction || s.n.Op == ir.OpCausal || s.n.Op == ir.OpWindow
		for _, a := range s.n.Args {
			if kr.inside[a.Def] {
				sh, err := kr.m.shape(a)
				if err != nil {
					return false, err
				}
				if len(sh) != len(dom)+1 || !equalInts(sh[:len(dom)], dom) {
					return false, nil
				}
				s.args = append(s.args, rowOperand{local: a, width: sh[len(dom)]})
				continue
			}
			if kr.viewOfLocal(a) {
				return false, nil
			}
			t, err := kr.eval(a)
			if err != nil {
				return false, err
			}
			op, ok := broadcastRows(t, dom)
			if !ok || (whole && (len(t.Shape) != len(dom)+1 || !equalInts(t.Shape[:len(dom)], dom))) {
				return false, nil
			}
			s.args = append(s.args, op)
		}
		for _, a := range s.args {
			if !whole && a.width != 1 && a.width != s.width {
				return false, nil
			}
		}
	}
	// Lengths, masks' windows and the kernel's outputs.
	outputs := map[*ir.Value]bool{}
	for _, o := range kr.k.Outputs {
		outputs[o] = true
	}
	for _, s := range steps {
		n := s.n
		if err := kr.lensOf(n); err != nil {
			return false, err
		}
		var err error
		if s.vdOut, err = kr.m.validity(n.Outs[0], s.shape); err != nil {
			return false, err
		}
		// Reductions skip the positions of their operand that do not exist;
		// masks count the keys of a row ragged along it. Their operand has
		// the shape rows × width.
		a := n.Args[0]
		ash := append(slices.Clone(dom), s.args[0].width)
		isMask := n.Op == ir.OpCausal || n.Op == ir.OpWindow
		if r := a.Ragged; r != nil && (n.Op.Info().Pattern == ir.Reduction || (isMask && r.Axis == len(ash)-1)) {
			if s.vdArg, err = kr.m.validity(a, ash); err != nil {
				return false, err
			}
		}
		switch n.Op {
		case ir.OpCausal, ir.OpWindow:
			if len(s.shape) < 2 {
				return false, fmt.Errorf("%s: %s needs rank >= 2, got shape %v", n, n.Op, s.shape)
			}
			if s.pos, err = kr.m.queryPos(n, s.shape[len(s.shape)-2]); err != nil {
				return false, fmt.Errorf("%s: %w", n, err)
			}
			s.window = -1
			if n.Op == ir.OpWindow {
				if s.window, err = kr.m.dim(n.Attr.W); err != nil {
					return false, fmt.Errorf("%s: %w", n, err)
				}
				if s.window < 1 {
					return false, fmt.Errorf("%s: window size %d is not positive", n, s.window)
				}
			}
		}
		if outputs[n.Outs[0]] {
			s.out = New(s.shape...)
		}
	}
	bufs := map[*ir.Value][]float64{}
	for _, s := range steps {
		bufs[s.n.Outs[0]] = make([]float64, s.width)
	}
	idx := make([]int, len(dom))
	var in [][]float64
	var order []int
	for r := range numElements(dom) {
		for _, s := range steps {
			in = in[:0]
			for i := range s.args {
				in = append(in, s.args[i].row(idx, bufs))
			}
			dst := bufs[s.n.Outs[0]]
			kr.m.at = s.n
			order = s.compute(r, idx, in, dst, order)
			if s.vdOut != nil {
				for j := range dst {
					if !s.vdOut.ok(r*s.width + j) {
						dst[j] = 0
					}
				}
			}
			if kr.m.opt.Round {
				roundAll(&Tensor{Data: dst}, s.n.Outs[0].Type.DType)
			}
			if s.out != nil {
				copy(s.out.Data[r*s.width:(r+1)*s.width], dst)
			}
		}
		for ax := len(idx) - 1; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < dom[ax] {
				break
			}
			idx[ax] = 0
		}
	}
	for _, s := range steps {
		if s.out != nil {
			kr.m.vals[s.n.Outs[0]] = s.out
		}
	}
	return true, nil
}

// at returns x[j], or x[0] for an operand stretched along the row.
func at(x []float64, j int) float64 {
	if len(x) == 1 {
		return x[0]
	}
	return x[j]
}

// compute computes row r (at multi-index idx) of the step's result into dst
// from its operands' rows, with the interpreter's semantics (see reduce,
// softmax, topk, mask); order is scratch space for topk.
func (s *rowStep) compute(r int, idx []int, in [][]float64, dst []float64, order []int) []int {
	n := s.n
	switch n.Op {
	case ir.OpCast:
		c := cast(&Tensor{Shape: []int{len(in[0])}, Data: in[0]}, n.Attr.To)
		for j := range dst {
			dst[j] = at(c.Data, j)
		}
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMax, ir.OpMin:
		f := binaryFunc(n.Op)
		for j := range dst {
			dst[j] = f(at(in[0], j), at(in[1], j))
		}
	case ir.OpCausal, ir.OpWindow:
		// Query i of the row sits at key position q = Tk_eff - Sq + i
		// (packed: its index and count in its own sequence).
		x, tk := in[0], s.width
		i, sq := s.pos(idx[len(idx)-1])
		q := s.vdArg.limitAt(r*tk, tk) - sq + i
		lo := 0
		if s.window > 0 {
			lo = q - s.window + 1
		}
		for j := range dst {
			if j > q || j < lo {
				dst[j] = math.Inf(-1)
			} else {
				dst[j] = at(x, j)
			}
		}
	case ir.OpSum, ir.OpReduceMax, ir.OpMean:
		// Accumulate over the row's existing positions.
		x := in[0]
		acc, count := 0.0, 0
		if n.Op == ir.OpReduceMax {
			acc = math.Inf(-1)
		}
		for j, v := range x {
			if s.vdArg != nil && !s.vdArg.ok(r*len(x)+j) {
				continue
			}
			if n.Op == ir.OpReduceMax {
				acc = math.Max(acc, v)
			} else {
				acc += v
			}
			count++
		}
		if n.Op == ir.OpMean && count > 0 {
			acc /= float64(count)
		}
		dst[0] = acc
	case ir.OpSoftmax:
		// Online softmax: one pass for the running max m and the sum ℓ of
		// exp(x - m), rescaled whenever m grows; then the normalised tail.
		x := in[0]
		m, l := math.Inf(-1), 0.0
		for j, v := range x {
			if (s.vdArg != nil && !s.vdArg.ok(r*len(x)+j)) || math.IsInf(v, -1) {
				continue
			}
			if v > m {
				l = l*math.Exp(m-v) + 1
				m = v
			} else {
				l += math.Exp(v - m)
			}
		}
		for j, v := range x {
			dst[j] = 0
			if !math.IsInf(m, -1) && (s.vdArg == nil || s.vdArg.ok(r*len(x)+j)) {
				dst[j] = math.Exp(v-m) / l
			}
		}
	case ir.OpTopK:
		x := in[0]
		order = order[:0]
		for j := range x {
			dst[j] = math.Inf(-1)
			if s.vdArg == nil || s.vdArg.ok(r*len(x)+j) {
				order = append(order, j)
			}
		}
		slices.SortFunc(order, func(a, b int) int {
			if c := cmp.Compare(x[b], x[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		for _, j := range order[:min(n.Attr.K, len(order))] {
			dst[j] = x[j]
		}
	default: // unary element-wise ops
		f := unaryFunc(n.Op, n.Attr.Num)
		for j := range dst {
			dst[j] = f(at(in[0], j))
		}
	}
	return order
}

// broadcastRows returns t as an operand of ops over rows dom (right-aligned
// broadcasting: size-1 and missing axes stretch); false when it does not
// broadcast to them.
func broadcastRows(t *Tensor, dom []int) (rowOperand, bool) {
	R, ra := len(dom)+1, len(t.Shape)
	if ra > R {
		return rowOperand{}, false
	}
	lead := R - ra
	tst := strides(t.Shape)
	op := rowOperand{t: t, st: make([]int, len(dom)), width: 1}
	for i := range dom {
		j := i - lead
		switch {
		case j < 0 || t.Shape[j] == 1:
		case t.Shape[j] == dom[i]:
			op.st[i] = tst[j]
		default:
			return rowOperand{}, false
		}
	}
	if ra > 0 {
		op.width = t.Shape[ra-1]
	}
	return op, true
}

// viewOfLocal reports whether a is a view (reshape, transpose, split,
// slice) of a value the kernel computes.
func (kr *kernelRun) viewOfLocal(a *ir.Value) bool {
	for v := a; v.Def != nil && plan.IsView(v.Def.Op) && !v.Def.Op.IsLeaf() && len(v.Def.Args) > 0 && v.Def.Op != ir.OpSeqLens; {
		v = v.Def.Args[0]
		if kr.inside[v.Def] {
			return true
		}
	}
	return false
}
