package torch

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// emitted are the ops the program computes: every op of the spec language
// (see the helpers in prelude.py for their meaning).
var emitted = map[ir.Op]bool{
	ir.OpConst: true, ir.OpSeqLens: true, ir.OpCast: true,
	ir.OpNeg: true, ir.OpExp: true, ir.OpLog: true, ir.OpSqrt: true, ir.OpRsqrt: true, ir.OpTanh: true,
	ir.OpSilu: true, ir.OpGelu: true, ir.OpSigmoid: true, ir.OpSoftcap: true,
	ir.OpAdd: true, ir.OpSub: true, ir.OpMul: true, ir.OpDiv: true, ir.OpMax: true, ir.OpMin: true,
	ir.OpCausal: true, ir.OpWindow: true, ir.OpRope: true,
	ir.OpReshape: true, ir.OpTranspose: true, ir.OpSplit: true, ir.OpConcat: true, ir.OpSlice: true, ir.OpGather: true,
	ir.OpSum: true, ir.OpReduceMax: true, ir.OpMean: true, ir.OpSoftmax: true, ir.OpTopK: true,
	ir.OpMatmul: true, ir.OpAppend: true,
}

// unaryExpr are the element-wise functions of one operand, as Python
// format strings over it.
var unaryExpr = map[ir.Op]string{
	ir.OpNeg: "-%s", ir.OpExp: "torch.exp(%s)", ir.OpLog: "torch.log(%s)", ir.OpSqrt: "torch.sqrt(%s)",
	ir.OpRsqrt: "torch.rsqrt(%s)", ir.OpTanh: "torch.tanh(%s)", ir.OpSilu: "torch.nn.functional.silu(%s)",
	ir.OpGelu: "torch.nn.functional.gelu(%s)", ir.OpSigmoid: "torch.sigmoid(%s)",
}

// binaryOp are the arithmetic operators.
var binaryOp = map[ir.Op]string{ir.OpAdd: "+", ir.OpSub: "-", ir.OpMul: "*", ir.OpDiv: "/"}

// reduceHelper are the helpers of the reductions.
var reduceHelper = map[ir.Op]string{ir.OpSum: "_sum", ir.OpMean: "_mean", ir.OpReduceMax: "_max"}

// op returns the Python statements computing node n (without the zeroing
// of ragged results, which body adds).
func (e *emitter) op(n *ir.Node) []string {
	out := varName(n.Outs[0])
	arg := func(i int) string { return e.operand(n, i) }
	set := func(expr string) []string { return []string{out + " = " + expr} }
	switch n.Op {
	case ir.OpConst:
		if e.inlinedOnly(n.Outs[0]) {
			return nil
		}
		return set(fmt.Sprintf("_const(%s, %q, mode)", pyFloat(n.Attr.Num), n.Attr.To))
	case ir.OpSeqLens:
		last := "None"
		if len(n.Args) == 2 {
			last = arg(1)
		}
		return set(fmt.Sprintf("_seqlens(%s, %s, %d)", arg(0), last, int64(n.Attr.Num)))
	case ir.OpCast:
		return set(fmt.Sprintf("_cast(%s, %q, mode)", arg(0), n.Attr.To))
	case ir.OpSoftcap:
		c := pyFloat(n.Attr.Num)
		return set(fmt.Sprintf("%s * torch.tanh(%s / %s)", c, arg(0), c))
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv:
		return set(fmt.Sprintf("%s %s %s", arg(0), binaryOp[n.Op], arg(1)))
	case ir.OpMax, ir.OpMin:
		return set(e.extremum(n))
	case ir.OpCausal, ir.OpWindow:
		w := "None"
		if n.Op == ir.OpWindow {
			w = pyDim(n.Attr.W, e.dims)
		}
		lim := "None"
		if r := n.Args[0].Ragged; r != nil && r.Axis == len(n.Args[0].Type.Shape)-1 {
			lim = e.ragged("_limit", n.Args[0])
		}
		return set(fmt.Sprintf("_mask(%s, %s, %s)", arg(0), w, lim))
	case ir.OpRope:
		return set(fmt.Sprintf("_rope(%s, %s, %s, mode)", arg(0), arg(1), pyFloat(n.Attr.Num)))
	case ir.OpReshape:
		return set(fmt.Sprintf("%s.reshape(%s)", arg(0), pyShape(n.Attr.Sizes, e.dims)))
	case ir.OpTranspose:
		return set(fmt.Sprintf("%s.permute(%s)", arg(0), pyInts(n.Attr.Perm)))
	case ir.OpSplit:
		outs := make([]string, len(n.Outs))
		for i, o := range n.Outs {
			outs[i] = varName(o)
		}
		lhs := strings.Join(outs, ", ")
		if len(outs) == 1 {
			lhs += ","
		}
		return []string{fmt.Sprintf("%s = torch.split(%s, %s, dim=%d)", lhs, arg(0), pyShape(n.Attr.Sizes, e.dims), n.Attr.Axis)}
	case ir.OpConcat:
		parts := make([]string, len(n.Args))
		for i := range n.Args {
			parts[i] = arg(i)
		}
		return set(fmt.Sprintf("_concat([%s], %d)", strings.Join(parts, ", "), n.Attr.Axis))
	case ir.OpSlice:
		return set(fmt.Sprintf("%s.narrow(%d, %s, %s)", arg(0), n.Attr.Axis, pyDim(n.Attr.Start, e.dims), pyDim(n.Attr.End.Sub(n.Attr.Start), e.dims)))
	case ir.OpGather:
		return set(fmt.Sprintf("%s[%s.long()]", arg(0), arg(1)))
	case ir.OpSum, ir.OpMean, ir.OpReduceMax:
		return set(fmt.Sprintf("%s(%s, %d, %s)", reduceHelper[n.Op], arg(0), n.Attr.Axis, e.valid(n.Args[0])))
	case ir.OpSoftmax:
		return set(fmt.Sprintf("_softmax(%s, %d, %s)", arg(0), n.Attr.Axis, e.valid(n.Args[0])))
	case ir.OpTopK:
		return set(fmt.Sprintf("_topk(%s, %d, %d, %s)", arg(0), n.Attr.K, n.Attr.Axis, e.valid(n.Args[0])))
	case ir.OpMatmul:
		return set(e.matmul(n))
	case ir.OpAppend:
		return e.append(n)
	}
	if f, ok := unaryExpr[n.Op]; ok {
		return set(fmt.Sprintf(f, arg(0)))
	}
	return nil // check refused the op already
}

// operand renders argument i of n: its variable, or the number of a
// constant inlined into a binary op.
func (e *emitter) operand(n *ir.Node, i int) string {
	a := n.Args[i]
	if inlined(n, a) {
		return pyFloat(a.Def.Attr.Num)
	}
	return varName(a)
}

// inlined reports whether constant a is written as a number in n: an
// operand of a binary op whose other operand is a tensor, as a PyTorch
// program writes x + 1e-05 (the number is not rounded to x's dtype).
func inlined(n *ir.Node, a *ir.Value) bool {
	if a.Def == nil || a.Def.Op != ir.OpConst || len(n.Args) != 2 {
		return false
	}
	if _, ok := binaryOp[n.Op]; !ok && n.Op != ir.OpMax && n.Op != ir.OpMin {
		return false
	}
	other := n.Args[0]
	if other == a {
		other = n.Args[1]
	}
	return other.Def == nil || other.Def.Op != ir.OpConst
}

// inlinedOnly reports whether every use of constant v is inlined, so that
// the program needs no variable for it.
func (e *emitter) inlinedOnly(v *ir.Value) bool {
	for _, u := range e.users[v] {
		if !inlined(u, v) {
			return false
		}
	}
	return true
}

// extremum renders max(a, b) or min(a, b): torch.maximum of two tensors,
// torch.clamp of a tensor and a number.
func (e *emitter) extremum(n *ir.Node) string {
	a, b := e.operand(n, 0), e.operand(n, 1)
	fn, bound := "torch.maximum", "min"
	if n.Op == ir.OpMin {
		fn, bound = "torch.minimum", "max"
	}
	switch {
	case inlined(n, n.Args[1]):
		return fmt.Sprintf("torch.clamp(%s, %s=%s)", a, bound, b)
	case inlined(n, n.Args[0]):
		return fmt.Sprintf("torch.clamp(%s, %s=%s)", b, bound, a)
	}
	return fmt.Sprintf("%s(%s, %s)", fn, a, b)
}

// matmul renders a @ b, stretching a head-group batch axis (GQA: H query
// heads over G kv heads) of either operand to the result's extent.
func (e *emitter) matmul(n *ir.Node) string {
	out := n.Outs[0].Type.Shape
	batch := out[:len(out)-2]
	ops := [2]string{}
	for i, x := range n.Args {
		s := varName(x)
		sh := x.Type.Shape
		xb := sh[:len(sh)-2]
		if i == 1 && len(sh) == 2 {
			xb = nil // a weight shared by every batch
		}
		for j, d := range xb {
			o := batch[len(batch)-len(xb)+j]
			if v, ok := d.Value(); (ok && v == 1) || d.Equal(o) {
				continue
			}
			s = fmt.Sprintf("_grouped(%s, %d, %s)", s, j, pyDim(o, e.dims))
		}
		ops[i] = s
	}
	return fmt.Sprintf("torch.matmul(%s, %s)", ops[0], ops[1])
}

// append renders K, V = append(kv, k, v) and the state after the step.
func (e *emitter) append(n *ir.Node) []string {
	st := n.Args[0]
	K, V, k, v := varName(n.Outs[0]), varName(n.Outs[1]), varName(n.Args[1]), varName(n.Args[2])
	after := varName(st) + "_after"
	l := st.Def.Attr.Layout
	if l == nil || l.Kind == ir.Contiguous {
		return []string{fmt.Sprintf("%s, %s, %s = _append_contiguous(%s, %s, %s)", K, V, after, varName(st), k, v)}
	}
	phys, cached := varName(st)+"_phys", varName(st)+"_cached"
	lines := []string{fmt.Sprintf("%s, %s = _append_layout(%s, %s, %s, %s)", K, V, varName(st), k, v, cached)}
	if l.Kind == ir.Paged {
		return append(lines, fmt.Sprintf("%s = _paged_write(%s, %s, %s, %s, %s, %d, %s)", after, phys, k, v, varName(l.Indptr), varName(l.Indices), l.Page, cached))
	}
	return append(lines, fmt.Sprintf("%s = _ragged_write(%s, %s, %s, %s, %s)", after, phys, k, v, varName(l.Indptr), cached))
}

// valid renders the validity mask of argument v: None for a dense value.
func (e *emitter) valid(v *ir.Value) string {
	if v.Ragged == nil {
		return "None"
	}
	return e.ragged("_valid", v)
}

// ragged renders helper (_valid or _limit) over ragged value v's marker.
func (e *emitter) ragged(helper string, v *ir.Value) string {
	r := v.Ragged
	return fmt.Sprintf("%s(%s, %s, %s, %d, %d)", helper, varName(v), varName(r.Lens), pyDim(r.Extra, e.dims), r.Axis, r.Batch)
}
