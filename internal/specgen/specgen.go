// Package specgen generates random well-typed specs for differential
// testing of the compiler: element-wise trees over every element-wise
// function, reductions over any axis, broadcasts, matmuls with epilogues,
// split, slice, reshape, transpose, concat, gather, rope, and attention in
// the forms the matcher accepts and in some it refuses, over random dims and
// dtypes. A spec is source text, so the parser and the checker run on it
// too. Check runs one spec through the front end, both pipelines and the
// interpreter and reports the first way the compiler disagrees with the
// spec as written.
package specgen

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// Spec is one generated spec and the dims it is checked at.
type Spec struct {
	// Name is the layer's name, also the file name without ".fu".
	Name string
	// Source is the spec text; its second line names the dims ("# dims: B=2,S=3").
	Source string
	// Dims binds every dim the spec declares.
	Dims map[string]int64
}

// value is a tensor the generated body can use: a leaf or a binding.
type value struct {
	name  string
	dt    string
	shape ir.Shape
	used  bool
	leaf  bool
}

// gen holds one spec being generated.
type gen struct {
	src Source
	// dt is the spec's main float dtype; casts introduce others.
	dt string
	// width is the constant last extent of fresh activations.
	width int64
	// base is the shape of fresh activations.
	base ir.Shape
	// dims are the dims' bindings; only the dims a declaration uses are declared.
	dims     map[string]int64
	declared map[string]bool
	decls    []string
	body     []string
	vals     []*value
	n        int
	// pos is the shared i32[B, S] position input once declared.
	pos *value
	// cache is set once the spec has a KV cache (one per spec).
	cache bool
}

// Generate returns the spec seed gives: the same seed, the same spec.
func Generate(seed uint64) Spec {
	return New(fmt.Sprintf("gen%d", seed), rand.New(rand.NewPCG(seed, 0x5bec_9e11)))
}

// New generates a spec named name from src's choices.
func New(name string, src Source) Spec {
	g := &gen{src: src, declared: map[string]bool{}}
	g.dt = g.pick(floatDTypes...)
	g.dims = map[string]int64{"B": 1 + int64(g.src.IntN(3)), "S": 1 + int64(g.src.IntN(5)), "T": int64(g.src.IntN(10))}
	g.width = g.size()
	b, s, w := ir.Sym("B"), ir.Sym("S"), ir.Const(g.width)
	g.base = [][]ir.Dim{{b, s, w}, {b, s, w}, {b, w}, {s, w}, {b, s, ir.Const(g.size()), w}}[g.src.IntN(5)]
	steps := 2 + g.src.IntN(10)
	for range steps {
		g.step()
	}
	return Spec{Name: name, Source: g.source(name), Dims: g.usedDims()}
}

// floatDTypes are the float dtypes, the first ones more likely.
var floatDTypes = []string{"f32", "bf16", "f32", "bf16", "f16", "fp8e4m3"}

// sizes are the constant extents fresh tensors take.
var sizes = []int64{1, 2, 3, 4, 5, 6, 8, 12, 16}

func (g *gen) size() int64 { return sizes[1+g.src.IntN(len(sizes)-1)] }

func (g *gen) pick(xs ...string) string { return xs[g.src.IntN(len(xs))] }

func (g *gen) coin(n int) bool { return g.src.IntN(n) == 0 }

// step adds one operation to the body, retrying ops that do not apply to
// the operand drawn.
func (g *gen) step() {
	for range 8 {
		op := ops[g.src.IntN(len(ops))]
		if op(g) {
			return
		}
	}
	g.unary(g.operand(g.dt))
}

// ops are the operations a step draws from.
var ops = []func(*gen) bool{
	func(g *gen) bool { return g.unary(g.operand("")) },
	func(g *gen) bool { return g.binary(g.operand("")) },
	func(g *gen) bool { return g.binary(g.operand("")) },
	func(g *gen) bool { return g.cast(g.operand("")) },
	func(g *gen) bool { return g.reduce(g.operand("")) },
	func(g *gen) bool { return g.softmax(g.operand("")) },
	func(g *gen) bool { return g.matmul(g.operand("")) },
	func(g *gen) bool { return g.matmul(g.operand("")) },
	func(g *gen) bool { return g.split(g.operand("")) },
	func(g *gen) bool { return g.slice(g.operand("")) },
	func(g *gen) bool { return g.reshape(g.operand("")) },
	func(g *gen) bool { return g.transpose(g.operand("")) },
	func(g *gen) bool { return g.concat(g.operand("")) },
	func(g *gen) bool { return g.gather() },
	func(g *gen) bool { return g.rope(g.operand("")) },
	func(g *gen) bool { return g.topk(g.operand("")) },
	func(g *gen) bool { return g.attention() },
}

// operand draws a value of dtype dt (any float dtype when empty): an unused
// binding, any binding, or a fresh input of the base shape.
func (g *gen) operand(dt string) *value {
	var unused, all []*value
	for _, v := range g.vals {
		if v.dt != "i32" && (dt == "" || v.dt == dt) {
			all = append(all, v)
			if !v.used {
				unused = append(unused, v)
			}
		}
	}
	switch {
	case len(unused) > 0 && !g.coin(4):
		return unused[g.src.IntN(len(unused))]
	case len(all) > 0 && !g.coin(3):
		return all[g.src.IntN(len(all))]
	}
	if dt == "" {
		dt = g.dt
	}
	return g.leaf("input", dt, g.base)
}

// leaf declares a fresh input, param or state.
func (g *gen) leaf(kind, dt string, shape ir.Shape) *value {
	g.n++
	prefix := map[string]string{"input": "x", "param": "w", "state": "kv"}[kind]
	v := &value{name: fmt.Sprintf("%s%d", prefix, g.n), dt: dt, shape: shape, leaf: true}
	g.decls = append(g.decls, fmt.Sprintf("%-6s %s : %s%s", kind, v.name, dt, shape))
	g.declare(shape)
	if kind != "state" {
		g.vals = append(g.vals, v) // a cache is read through its append
	}
	return v
}

// weight declares a param, or an input when the shape has a dim (a weight
// is a constant-shaped tensor).
func (g *gen) weight(dt string, shape ir.Shape) *value {
	for _, d := range shape {
		if _, ok := d.Value(); !ok {
			return g.leaf("input", dt, shape)
		}
	}
	return g.leaf("param", dt, shape)
}

func (g *gen) declare(shape ir.Shape) {
	for _, d := range shape {
		for _, s := range d.Symbols() {
			g.declared[s] = true
		}
	}
}

// bind adds `vN = expr` (expr's %s are the args' names) and returns vN.
func (g *gen) bind(dt string, shape ir.Shape, expr string, args ...*value) *value {
	return g.bindMany(dt, []ir.Shape{shape}, expr, args...)[0]
}

// bindMany adds `a, b = expr` for a call with several results.
func (g *gen) bindMany(dt string, shapes []ir.Shape, expr string, args ...*value) []*value {
	out := make([]*value, len(shapes))
	names := make([]string, len(shapes))
	for i, s := range shapes {
		g.n++
		out[i] = &value{name: fmt.Sprintf("v%d", g.n), dt: dt, shape: s}
		names[i] = out[i].name
	}
	argNames := make([]any, len(args))
	for i, a := range args {
		a.used = true
		argNames[i] = a.name
	}
	g.body = append(g.body, fmt.Sprintf("%s = %s", strings.Join(names, ", "), fmt.Sprintf(expr, argNames...)))
	g.vals = append(g.vals, out...)
	return out
}

// source assembles the spec: every binding nothing uses becomes an output,
// and so do a few that are used (kernels with several outputs).
func (g *gen) source(name string) string {
	for _, v := range g.vals {
		if v.leaf && !v.used && v.dt != "i32" {
			g.unary(v) // a fresh operand an op then did not apply to
		}
	}
	var outs []string
	for _, v := range g.vals {
		if v.leaf || (v.used && !g.coin(6)) {
			continue
		}
		g.n++
		o := fmt.Sprintf("y%d", g.n)
		g.decls = append(g.decls, fmt.Sprintf("output %s : %s%s", o, v.dt, v.shape))
		outs = append(outs, fmt.Sprintf("%s = %s", o, v.name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# generated by internal/specgen\n# dims: %s\nlayer %s\n", DimsString(g.usedDims()), name)
	if names := g.dimNames(); len(names) > 0 {
		fmt.Fprintf(&b, "dim %s\n", strings.Join(names, ", "))
	}
	b.WriteString("\n")
	for _, d := range g.decls {
		b.WriteString(d + "\n")
	}
	b.WriteString("\n")
	for _, s := range append(g.body, outs...) {
		b.WriteString(s + "\n")
	}
	return b.String()
}

func (g *gen) dimNames() []string {
	var names []string
	for _, d := range []string{"B", "S", "T"} {
		if g.declared[d] {
			names = append(names, d)
		}
	}
	return names
}

func (g *gen) usedDims() map[string]int64 {
	out := map[string]int64{}
	for _, d := range g.dimNames() {
		out[d] = g.dims[d]
	}
	return out
}

// DimsString prints dims sorted by name: B=2,S=3.
func DimsString(dims map[string]int64) string {
	keys := make([]string, 0, len(dims))
	for k := range dims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, dims[k])
	}
	return strings.Join(parts, ",")
}
