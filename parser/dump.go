package parser

import (
	"fmt"
	"strings"
)

// Dump prints the AST one statement per line with positions, in a stable
// form used by the golden tests.
func Dump(f *File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d:%d layer %s\n", f.Pos.Line, f.Pos.Column, f.Name)
	for _, s := range f.Stmts {
		fmt.Fprintf(&b, "%d:%d %s\n", s.Pos.Line, s.Pos.Column, stmtString(s))
	}
	return b.String()
}

func stmtString(s *Stmt) string {
	switch {
	case s.Dims != nil:
		return "(dim " + namesString(s.Dims.Names) + ")"
	case s.Consts != nil:
		items := make([]string, len(s.Consts.Items))
		for i, c := range s.Consts.Items {
			items[i] = "(" + c.Name + " " + ExprString(c.Value) + ")"
		}
		return "(const " + strings.Join(items, " ") + ")"
	case s.Tensor != nil:
		t := s.Tensor
		out := fmt.Sprintf("(%s %s %s", t.Kind, t.Name, TypeString(t.Type))
		if t.Layout != nil {
			out += " (layout " + t.Layout.Name + argsString(t.Layout.Args) + ")"
		}
		return out + ")"
	case s.Fn != nil:
		return fmt.Sprintf("(fn %s (%s) %s)", s.Fn.Name, namesString(s.Fn.Params), ExprString(s.Fn.Body))
	case s.Binding != nil:
		return fmt.Sprintf("(= (%s) %s)", namesString(s.Binding.Names), ExprString(s.Binding.Value))
	}
	return "(?)"
}

func namesString(ns []*Name) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name
	}
	return strings.Join(out, " ")
}

// TypeString prints a type as written: bf16[B, S, D].
func TypeString(t *Type) string {
	dims := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = ExprString(d)
	}
	return t.DType + "[" + strings.Join(dims, ", ") + "]"
}

func argsString(args []*Arg) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteByte(' ')
		if a.Name != "" {
			b.WriteString(a.Name + "=")
		}
		b.WriteString(ExprString(a.Value))
	}
	return b.String()
}

// ExprString prints an expression fully parenthesised in prefix form.
func ExprString(e *Expr) string {
	out := termString(e.Left)
	for _, op := range e.Ops {
		out = "(" + op.Op + " " + out + " " + termString(op.Right) + ")"
	}
	return out
}

func termString(t *Term) string {
	out := unaryString(t.Left)
	for _, op := range t.Ops {
		out = "(" + op.Op + " " + out + " " + unaryString(op.Right) + ")"
	}
	return out
}

func unaryString(u *Unary) string {
	if u.Neg != nil {
		return "(neg " + unaryString(u.Neg) + ")"
	}
	p := u.Primary
	switch {
	case p.Number != nil:
		return *p.Number
	case p.Paren != nil:
		return ExprString(p.Paren)
	case p.List != nil:
		items := make([]string, len(p.List.Items))
		for i, it := range p.List.Items {
			items[i] = ExprString(it)
		}
		return "[" + strings.Join(items, " ") + "]"
	case p.Call != nil && p.Call.HasArgs:
		return "(" + p.Call.Name + argsString(p.Call.Args) + ")"
	case p.Call != nil:
		return p.Call.Name
	}
	return "?"
}
