// Package frontend lowers a parsed spec (package parser's AST) to an
// ir.Graph: it resolves names, folds constants, evaluates shapes, inlines
// user functions and types every node, reporting every error of the file
// at once, positioned, with a hint.
package frontend

import (
	"fmt"
	"math"
	"slices"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/fuser-dev/fuser/diag"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/parser"
)

// Build turns a parsed spec into a typed graph. It reports every semantic
// error of the file at once as a diag.List.
func Build(f *parser.File) (*ir.Graph, error) {
	b := &builder{
		g:       &ir.Graph{Name: f.Name, Consts: map[string]float64{}},
		dims:    map[string]bool{},
		consts:  map[string]number{},
		fns:     map[string]*parser.FnDecl{},
		scope:   map[string]*binding{},
		outputs: map[string]*binding{},
		bad:     map[string]bool{},
	}
	b.declare(f)
	b.bind(f)
	if len(b.errs) == 0 {
		// Unused names are reported only on an otherwise correct file: an
		// erroneous expression stops before it reads all of its operands.
		b.checkUnused()
	}
	b.errs.Sort()
	if err := b.errs.Err(); err != nil {
		return nil, err
	}
	return b.g, nil
}

type builder struct {
	g       *ir.Graph
	errs    diag.List
	dims    map[string]bool
	consts  map[string]number
	fns     map[string]*parser.FnDecl
	scope   map[string]*binding
	outputs map[string]*binding
	// order lists every tensor binding once, to find unused ones.
	order []*binding
	// bad holds names whose declaration had an error; their uses report nothing.
	bad map[string]bool
	// frames are the user-function calls being inlined, innermost last.
	frames []*frame
}

// binding is a name bound to a tensor.
type binding struct {
	name string
	kind string // input, param, state, output or value
	pos  diag.Pos
	val  *ir.Value
	used bool
	decl ir.Type // declared type of an output
}

type frame struct {
	fn     *parser.FnDecl
	params map[string]operand
}

// operand is the result of an expression: a tensor or a number.
type operand struct {
	val *ir.Value
	num *number
}

func pos(p lexer.Position) diag.Pos { return parser.Position(p) }

func (b *builder) errorf(p lexer.Position, hint, format string, args ...any) {
	if len(b.frames) > 0 {
		fr := b.frames[0]
		hint = joinHint(hint, fmt.Sprintf("in the body of fn %s (line %d)", fr.fn.Name, fr.fn.Pos.Line))
	}
	b.errs.Add(pos(p), hint, format, args...)
}

func joinHint(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// declared reports whether name is already taken by any declaration.
func (b *builder) declared(name string) bool {
	_, c := b.consts[name]
	_, f := b.fns[name]
	_, t := b.scope[name]
	_, o := b.outputs[name]
	return b.dims[name] || c || f || t || o
}

// declare handles every dim, const, fn and tensor declaration, in file order.
func (b *builder) declare(f *parser.File) {
	var layouts []*parser.TensorDecl
	for _, s := range f.Stmts {
		switch {
		case s.Dims != nil:
			for _, n := range s.Dims.Names {
				if b.declared(n.Name) {
					b.errorf(n.Pos, "", "%s is declared twice", n.Name)
					continue
				}
				b.dims[n.Name] = true
				b.g.Dims = append(b.g.Dims, n.Name)
			}
		case s.Consts != nil:
			for _, c := range s.Consts.Items {
				v, ok := b.constExpr(c.Value)
				if b.declared(c.Name) {
					b.errorf(c.Pos, "", "%s is declared twice", c.Name)
					continue
				}
				if ok {
					b.consts[c.Name] = v
					b.g.Consts[c.Name] = v.v
				} else {
					b.bad[c.Name] = true
				}
			}
		case s.Fn != nil:
			if b.declared(s.Fn.Name) || builtins[s.Fn.Name] != nil {
				b.errorf(s.Fn.Pos, "", "fn %s is declared twice or shadows a built-in", s.Fn.Name)
				continue
			}
			b.fns[s.Fn.Name] = s.Fn
		case s.Tensor != nil:
			if b.declareTensor(s.Tensor) && s.Tensor.Layout != nil {
				layouts = append(layouts, s.Tensor)
			}
		}
	}
	b.orderLeaves()
	for _, t := range layouts {
		b.layout(t)
	}
}

// orderLeaves puts the state leaves after the input and param leaves,
// keeping declaration order within each, so that a layout's inputs are
// defined before the state that uses them (Verify checks it) wherever the
// spec declares them. Node and value ids are renumbered to follow the new
// order; only leaves exist yet, unless a const expression failed.
func (b *builder) orderLeaves() {
	rank := func(n *ir.Node) int {
		switch n.Op {
		case ir.OpInput, ir.OpParam:
			return 0
		case ir.OpState:
			return 1
		}
		return 2
	}
	var ids []int
	for _, n := range b.g.Nodes {
		for _, o := range n.Outs {
			ids = append(ids, o.ID)
		}
	}
	slices.Sort(ids)
	slices.SortStableFunc(b.g.Nodes, func(x, y *ir.Node) int { return rank(x) - rank(y) })
	i := 0
	for j, n := range b.g.Nodes {
		n.ID = j + 1
		for _, o := range n.Outs {
			o.ID = ids[i]
			i++
		}
	}
}

func (b *builder) declareTensor(t *parser.TensorDecl) bool {
	if b.declared(t.Name) {
		b.errorf(t.Pos, "", "%s is declared twice", t.Name)
		return false
	}
	typ, ok := b.typeOf(t.Type)
	if !ok {
		b.bad[t.Name] = true
		return false
	}
	if t.Kind == "output" {
		if t.Layout != nil {
			b.errorf(t.Layout.Pos, "", "only a state can have a layout")
		}
		b.outputs[t.Name] = &binding{name: t.Name, kind: "output", pos: pos(t.Pos), decl: typ}
		return false
	}
	op := map[string]ir.Op{"input": ir.OpInput, "param": ir.OpParam, "state": ir.OpState}[t.Kind]
	if t.Layout != nil && op != ir.OpState && (op != ir.OpInput || t.Layout.Name != "packed") {
		b.errorf(t.Layout.Pos, "an input's tokens may be packed: @ packed(indptr=qo_indptr)", "only a state can have a layout, and only an input a packed one")
	}
	n := b.node(op, pos(t.Pos))
	v := b.g.NewValue(n, typ)
	v.Name = t.Name
	switch op {
	case ir.OpInput:
		b.g.Inputs = append(b.g.Inputs, v)
	case ir.OpParam:
		b.g.Params = append(b.g.Params, v)
	case ir.OpState:
		b.g.States = append(b.g.States, v)
	}
	bd := &binding{name: t.Name, kind: t.Kind, pos: pos(t.Pos), val: v}
	b.scope[t.Name] = bd
	b.order = append(b.order, bd)
	return op == ir.OpState || op == ir.OpInput
}

// typeOf checks a declared type.
func (b *builder) typeOf(t *parser.Type) (ir.Type, bool) {
	dt := ir.ParseDType(t.DType)
	ok := true
	if dt == ir.Invalid {
		b.errorf(t.Pos, "dtypes are bf16, f16, f32, fp8e4m3 and i32", "unknown dtype %q", t.DType)
		ok = false
	}
	shape := make(ir.Shape, len(t.Shape))
	for i, e := range t.Shape {
		d, dok := b.sizeExpr(e)
		ok = ok && dok
		shape[i] = d
	}
	typ := ir.Type{DType: dt, Shape: shape}
	return typ, ok && b.checkBytes(t.Pos, typ)
}

// checkBytes reports at p a type whose byte count overflows int64 for
// every binding of the dims.
func (b *builder) checkBytes(p lexer.Position, t ir.Type) bool {
	if _, err := t.Bytes(); err != nil {
		b.errorf(p, "its byte count must fit in int64: no device holds it", "%s takes more bytes than int64 counts", t)
		return false
	}
	return true
}

// node appends a node to the graph.
func (b *builder) node(op ir.Op, p diag.Pos, args ...*ir.Value) *ir.Node {
	n := &ir.Node{ID: len(b.g.Nodes) + 1, Op: op, Args: args, Pos: p}
	b.g.Nodes = append(b.g.Nodes, n)
	return n
}

// apply adds a node and types it; it reports a type error at p and returns
// nil outputs on failure.
func (b *builder) apply(op ir.Op, p lexer.Position, attr ir.Attr, args ...*ir.Value) []*ir.Value {
	n := &ir.Node{Op: op, Args: args, Pos: pos(p), Attr: attr}
	res, err := ir.Infer(n)
	if err != nil {
		b.errorf(p, err.Hint, "%s", err.Msg)
		return nil
	}
	for _, r := range res {
		if !b.checkBytes(p, r.Type) {
			return nil
		}
	}
	n.ID = len(b.g.Nodes) + 1
	b.g.Nodes = append(b.g.Nodes, n)
	for _, r := range res {
		v := b.g.NewValue(n, r.Type)
		v.Ragged, v.Packed = r.Ragged, r.Packed
	}
	return n.Outs
}

// apply1 is apply for single-output ops.
func (b *builder) apply1(op ir.Op, p lexer.Position, attr ir.Attr, args ...*ir.Value) *ir.Value {
	outs := b.apply(op, p, attr, args...)
	if outs == nil {
		return nil
	}
	return outs[0]
}

// bind handles the bindings, in file order.
func (b *builder) bind(f *parser.File) {
	for _, s := range f.Stmts {
		if s.Binding == nil {
			continue
		}
		bd := s.Binding
		vals := b.exprMulti(bd.Value, len(bd.Names))
		for i, n := range bd.Names {
			var v *ir.Value
			if vals != nil {
				v = vals[i]
			}
			b.assign(n, v)
		}
	}
	for _, name := range sortedKeys(b.outputs) {
		o := b.outputs[name]
		if o.val == nil && !o.used {
			b.errs.Add(o.pos, fmt.Sprintf("assign it: %s = ...", name), "output %s is declared but never assigned", name)
		}
	}
	b.g.Outputs = nil
	for _, s := range f.Stmts {
		if t := s.Tensor; t != nil && t.Kind == "output" {
			if o := b.outputs[t.Name]; o != nil && o.val != nil {
				b.g.Outputs = append(b.g.Outputs, o.val)
			}
		}
	}
}

// assign binds one name; v is nil when its expression had errors.
func (b *builder) assign(n *parser.Name, v *ir.Value) {
	if _, isConst := b.consts[n.Name]; isConst || b.dims[n.Name] || b.fns[n.Name] != nil {
		b.errorf(n.Pos, "choose another name", "%s is a dim, const or fn and cannot be rebound", n.Name)
		return
	}
	if o, ok := b.outputs[n.Name]; ok {
		o.used = true // an output with an erroneous value is still assigned
		if o.val != nil {
			b.errorf(n.Pos, fmt.Sprintf("first assigned at line %d", o.pos.Line), "output %s is assigned twice", n.Name)
			return
		}
		if v == nil {
			return
		}
		if v.Type.DType != o.decl.DType || !v.Type.Shape.Equal(o.decl.Shape) {
			b.errorf(n.Pos, fmt.Sprintf("output %s is declared %s", n.Name, o.decl), "output %s gets a value of type %s", n.Name, v.Type)
			return
		}
		if v.Def.Op.IsLeaf() || b.isOutput(v) || isView(v.Def.Op) {
			// A value named already (y = x, or y = z of another output z)
			// gets a copy of its own, which carries the output's name; so
			// does a view (y = a of a, b = split(...)) and the cache an
			// append returns, which no kernel writes as a buffer of their own.
			if v = b.apply1(ir.OpCast, n.Pos, ir.Attr{To: v.Type.DType}, v); v == nil {
				return
			}
		}
		o.val, o.pos = v, pos(n.Pos)
		v.Name = n.Name
		return
	}
	if v == nil {
		b.bad[n.Name] = true
		delete(b.scope, n.Name)
		return
	}
	delete(b.bad, n.Name)
	if v.Name == "" {
		v.Name = n.Name
	}
	bd := &binding{name: n.Name, kind: "value", pos: pos(n.Pos), val: v}
	b.scope[n.Name] = bd
	b.order = append(b.order, bd)
}

// isView reports whether op's results only reinterpret its operand's
// elements (see plan.IsView), or are the cache an append writes into: an
// output bound to one needs a kernel to write it.
func isView(op ir.Op) bool {
	switch op {
	case ir.OpReshape, ir.OpTranspose, ir.OpSplit, ir.OpSlice, ir.OpAppend:
		return true
	}
	return false
}

// isOutput reports whether v is already an output's value.
func (b *builder) isOutput(v *ir.Value) bool {
	for _, o := range b.outputs {
		if o.val == v {
			return true
		}
	}
	return false
}

func (b *builder) checkUnused() {
	for _, bd := range b.order {
		if bd.used {
			continue
		}
		switch bd.kind {
		case "value":
			b.errs.Add(bd.pos, "use it, or remove the binding", "%s is assigned and never used", bd.name)
		default:
			b.errs.Add(bd.pos, "use it, or remove the declaration", "%s %s is declared and never used", bd.kind, bd.name)
		}
	}
}

// constExpr evaluates a const declaration's expression.
func (b *builder) constExpr(e *parser.Expr) (number, bool) {
	op, ok := b.expr(e)
	if !ok {
		return number{}, false
	}
	if op.num == nil {
		b.errorf(e.Pos, "constants are numbers or arithmetic on numbers", "const value is not a number")
		return number{}, false
	}
	return *op.num, true
}

// foldUnary evaluates a built-in element-wise function on a number.
var foldUnary = map[string]func(float64) float64{
	"exp":     math.Exp,
	"log":     math.Log,
	"sqrt":    math.Sqrt,
	"rsqrt":   func(x float64) float64 { return 1 / math.Sqrt(x) },
	"tanh":    math.Tanh,
	"sigmoid": func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	"silu":    func(x float64) float64 { return x / (1 + math.Exp(-x)) },
	"gelu":    func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) },
}

// Parse parses and builds a spec: the front end in one call. Errors are a
// diag.List; render them with the source for users.
func Parse(filename, src string) (*ir.Graph, error) {
	f, err := parser.Parse(filename, src)
	if err != nil {
		return nil, err
	}
	return Build(f)
}
