package ir

import (
	"fmt"
	"strings"
)

// String prints the graph one node per line, in a stable form used by golden
// tests and `fuser plan --dump-after`.
func (g *Graph) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "layer %s dims(%s)\n", g.Name, strings.Join(g.Dims, ", "))
	for _, n := range g.Nodes {
		b.WriteString(n.String())
		b.WriteByte('\n')
	}
	outs := make([]string, len(g.Outputs))
	for i, o := range g.Outputs {
		outs[i] = o.Ref()
	}
	fmt.Fprintf(&b, "outputs %s\n", strings.Join(outs, ", "))
	return b.String()
}

// Ref names a value as %ID or %ID.name.
func (v *Value) Ref() string {
	if v.Name != "" {
		return fmt.Sprintf("%%%d.%s", v.ID, v.Name)
	}
	return fmt.Sprintf("%%%d", v.ID)
}

// String prints a node as "%3.h : bf16[B, S, 4096] = mul %1, %2 {axis=2}".
func (n *Node) String() string {
	outs := make([]string, len(n.Outs))
	for i, o := range n.Outs {
		outs[i] = o.Ref() + " : " + o.Type.String()
		if r := o.Ragged; r != nil {
			outs[i] += fmt.Sprintf(" ragged(axis=%d, lens=%s", r.Axis, r.Lens.Ref())
			if e := r.Extra.String(); e != "0" && strings.HasPrefix(e, "-") {
				outs[i] += " - " + e[1:]
			} else if e != "0" {
				outs[i] += " + " + e
			}
			if r.Less != nil {
				outs[i] += " - packed " + r.Less.Ref()
			}
			outs[i] += ")"
		}
		if p := o.Packed; p != nil {
			outs[i] += fmt.Sprintf(" packed(axis=%d, indptr=%s)", p.Axis, p.Indptr.Ref())
		}
	}
	args := make([]string, len(n.Args))
	for i, a := range n.Args {
		args[i] = a.Ref()
	}
	s := strings.Join(outs, ", ") + " = " + n.Op.String()
	if len(args) > 0 {
		s += " " + strings.Join(args, ", ")
	}
	if a := n.attrString(); a != "" {
		s += " {" + a + "}"
	}
	return s
}

func (n *Node) attrString() string {
	a := n.Attr
	switch n.Op {
	case OpConst:
		return fmt.Sprintf("%g", a.Num)
	case OpCast:
		return "to=" + a.To.String()
	case OpSum, OpReduceMax, OpMean, OpSoftmax:
		return fmt.Sprintf("axis=%d", a.Axis)
	case OpTopK:
		return fmt.Sprintf("k=%d", a.K)
	case OpSoftcap:
		return fmt.Sprintf("cap=%g", a.Num)
	case OpRope:
		return fmt.Sprintf("theta=%g", a.Num)
	case OpWindow:
		return "w=" + a.W.String()
	case OpTranspose:
		return fmt.Sprintf("perm=%v", a.Perm)
	case OpReshape:
		return "shape=" + Shape(a.Sizes).String()
	case OpSplit:
		return fmt.Sprintf("axis=%d sizes=%s", a.Axis, Shape(a.Sizes))
	case OpConcat:
		return fmt.Sprintf("axis=%d", a.Axis)
	case OpSlice:
		return fmt.Sprintf("axis=%d start=%s end=%s", a.Axis, a.Start, a.End)
	case OpAttention:
		return a.Attn.String()
	case OpSeqLens:
		if a.Num > 0 {
			return fmt.Sprintf("page=%g", a.Num)
		}
	case OpState:
		if l := a.Layout; l != nil {
			s := fmt.Sprintf("layout=%s indptr=%s", l.Kind, l.Indptr.Ref())
			if l.Kind == Paged {
				s += fmt.Sprintf(" page=%d pages=%s indices=%s last=%s", l.Page, l.Pages, l.Indices.Ref(), l.Last.Ref())
			}
			return s
		}
	}
	return ""
}

// String prints the variant: scale, then bias (its factor), causal,
// window, softcap, cascade, transposed keys, varlen when present.
func (at *Attention) String() string {
	s := fmt.Sprintf("scale=%.6g", at.Scale)
	if at.Bias {
		s += fmt.Sprintf(" bias=%.6g", at.BiasScale)
	}
	if at.Causal {
		s += " causal"
	}
	if !at.Window.IsZero() {
		s += " window=" + at.Window.String()
	}
	if at.Softcap != 0 {
		s += fmt.Sprintf(" softcap=%g", at.Softcap)
	}
	if at.Cascade {
		s += " cascade"
	}
	if at.KeysT {
		s += " keys=transposed"
	}
	if at.Varlen {
		s += " varlen"
	}
	return s
}
