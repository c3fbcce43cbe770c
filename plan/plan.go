// Package plan holds the kernel plan of a layer: the graph's ops grouped into
// kernels, each with a strategy, the values it reads and writes, and, once
// dims are bound, its launch shape and arena offsets. The unfused program is
// the trivial plan, one op per kernel, built by the same code.
package plan

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// Strategy is how a kernel computes its ops.
type Strategy int

// The kernel strategies.
const (
	// Row is an element-wise kernel over rows (the last axis), its row
	// reductions chained while those before are per-row statistics
	// (RowStatistic); RMSNorm, LayerNorm and residual add + RMSNorm are Row
	// kernels.
	Row Strategy = iota
	// Reduce reduces over an axis other than the last.
	Reduce
	// Gemm is a matmul with a generated epilogue: GEMV for small M (decode),
	// tensor-core tiles otherwise.
	Gemm
	// Attention is flash attention: tiled prefill with causal tile skipping,
	// or split-KV decode with a log-sum-exp merge, chosen at launch.
	Attention
	// Append writes new keys and values into a KV cache.
	Append
	// Copy materialises an injective op (gather, concat).
	Copy
)

var strategyNames = [...]string{"row", "reduce", "gemm", "attention", "append", "copy"}

// String names the strategy.
func (s Strategy) String() string { return strategyNames[s] }

// Kernel is one launch of the plan (two for split-KV decode attention).
type Kernel struct {
	Name     string
	Strategy Strategy
	// Nodes are the graph ops the kernel computes, in graph order.
	Nodes []*ir.Node
	// Inputs are the values the kernel reads from memory; Outputs those it
	// writes. Both are computed by Finish.
	Inputs, Outputs []*ir.Value
	// Launch is set once dims are bound (the launch pass).
	Launch *Launch
	// Load marks a kernel of the load stage: it computes values of params
	// and constants only, once after the weights are loaded, and the step's
	// kernels read its outputs as they read params (see Plan.Folded).
	Load bool
}

// Anchor is the op a kernel is built around, its first node: a Gemm
// kernel's matmul, before the epilogue it absorbed.
func (k *Kernel) Anchor() *ir.Node { return k.Nodes[0] }

// Plan is a layer as an ordered list of kernels.
type Plan struct {
	Graph   *ir.Graph
	Kernels []*Kernel
	// Arena is the memory plan, set once dims are bound.
	Arena *Arena
	// Layouts are the values a kernel stores in another axis order than
	// their own, for their readers (the layout pass); every other value
	// is stored row-major.
	Layouts map[*ir.Value]Layout
}

// IsView reports whether an op only reinterprets its input (no kernel, no
// traffic): reshape, transpose, split and slice are strided views; constants
// are immediates; sequence lengths are read by the kernels that need them.
func IsView(op ir.Op) bool {
	switch op {
	case ir.OpReshape, ir.OpTranspose, ir.OpSplit, ir.OpSlice, ir.OpConst, ir.OpSeqLens:
		return true
	}
	return op.IsLeaf()
}

// RowStatistic reports whether the row reduction n leaves one value a row
// (sum, mean, max: its last axis of size 1), which later passes over the
// row read as a per-row scalar: a row kernel chains reductions while those
// before are statistics (the rows pass forms such kernels, codegen/cuda
// generates them).
func RowStatistic(n *ir.Node) bool {
	s := n.Outs[0].Type.Shape
	if len(s) == 0 {
		return false
	}
	v, ok := s[len(s)-1].Value()
	return ok && v == 1
}

// Finish computes every kernel's inputs and outputs from its nodes and
// names the kernels. A value is an input when a kernel node reads it (through
// views; the page tables of the caches it appends to or reads and the
// indptrs of the packed tokens it pairs with their sequences,
// ir.Node.SeqIndptrs, included) and another kernel or the caller writes
// it; an output when it is read outside the kernel or is a graph output.
func (p *Plan) Finish() {
	owner := map[*ir.Value]*Kernel{}
	for _, k := range p.Kernels {
		for _, n := range k.Nodes {
			for _, o := range n.Outs {
				owner[o] = k
			}
		}
	}
	users := p.Graph.Users()
	isOutput := map[*ir.Value]bool{}
	for _, o := range p.Graph.Outputs {
		isOutput[o] = true
	}
	for i, k := range p.Kernels {
		k.Inputs, k.Outputs = nil, nil
		seenIn := map[*ir.Value]bool{}
		for _, n := range k.Nodes {
			args := n.Args
			if n.Op == ir.OpAppend {
				args = args[1:] // an append writes the cache; it does not read it
			}
			reads := append([]*ir.Value(nil), args...)
			if n.Op == ir.OpAppend {
				reads = append(reads, layoutInputs(n.Args[0])...)
			}
			reads = append(reads, n.SeqIndptrs()...)
			for _, a := range args {
				if a.Ragged != nil {
					reads = append(reads, a.Ragged.Lens)
				}
				for _, src := range Sources(a) {
					if r := Root(src); InCache(r) {
						reads = append(reads, layoutInputs(r.Def.Args[0])...)
					}
				}
			}
			for _, a := range reads {
				for _, src := range Sources(a) {
					if owner[Root(src)] != k && !seenIn[src] {
						seenIn[src] = true
						k.Inputs = append(k.Inputs, src)
					}
				}
			}
			for _, o := range n.Outs {
				if isOutput[o] || readOutside(o, k, users, owner) {
					k.Outputs = append(k.Outputs, o)
				}
			}
		}
		k.Name = kernelName(i, k)
	}
}

// layoutInputs returns the page-table inputs of a paged or ragged state:
// every kernel that writes or reads the cache addresses it through them.
func layoutInputs(state *ir.Value) []*ir.Value {
	l := state.Def.Attr.Layout
	if l == nil {
		return nil
	}
	var out []*ir.Value
	for _, v := range []*ir.Value{l.Indptr, l.Indices, l.Last} {
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}

// readOutside reports whether a kernel value is read, through views, by a
// node of another kernel.
func readOutside(v *ir.Value, k *Kernel, users map[*ir.Value][]*ir.Node, owner map[*ir.Value]*Kernel) bool {
	for _, u := range users[v] {
		if IsView(u.Op) {
			for _, o := range u.Outs {
				if readOutside(o, k, users, owner) {
					return true
				}
			}
			continue
		}
		if owner[u.Outs[0]] != k {
			return true
		}
	}
	return false
}

// Sources returns the values a read of v touches in memory: v itself, or,
// through reshapes and transposes, the value they reinterpret; a split or
// slice part is its own source (it covers part of its buffer). Constants
// read nothing; sequence lengths read the layout inputs.
func Sources(v *ir.Value) []*ir.Value {
	d := v.Def
	switch {
	case d == nil || !IsView(d.Op) || d.Op.IsLeaf():
		return []*ir.Value{v}
	case d.Op == ir.OpConst:
		return nil
	case d.Op == ir.OpSeqLens:
		var out []*ir.Value
		for _, a := range d.Args {
			out = append(out, Sources(a)...)
		}
		return out
	case d.Op == ir.OpSplit || d.Op == ir.OpSlice:
		return []*ir.Value{v}
	}
	return Sources(d.Args[0])
}

// Root returns the buffer a value lives in: itself, or the value a chain of
// views reinterprets.
func Root(v *ir.Value) *ir.Value {
	for v.Def != nil && IsView(v.Def.Op) && !v.Def.Op.IsLeaf() && len(v.Def.Args) > 0 && v.Def.Op != ir.OpSeqLens {
		v = v.Def.Args[0]
	}
	return v
}

// kernelName is a deterministic name: index, strategy and the ops it
// fuses, its anchor's first.
func kernelName(i int, k *Kernel) string {
	var ops []string
	seen := map[string]bool{}
	for _, n := range k.Nodes {
		if IsView(n.Op) {
			continue
		}
		name := n.Op.String()
		if !seen[name] {
			seen[name] = true
			ops = append(ops, name)
		}
	}
	if len(ops) > 4 {
		ops = append(ops[:4], "etc")
	}
	return fmt.Sprintf("k%02d_%s_%s", i, k.Strategy, strings.Join(ops, "_"))
}
