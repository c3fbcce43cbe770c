package gpu

import (
	"fmt"
	"slices"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// Buf is where a kernel parameter's value lives on the device, laid out as
// the generated Go launch packages (codegen/golang) lay it out: every leaf
// and graph output in an allocation of its own, every other value at its
// offset in the arena of the memory plan.
type Buf struct {
	Value *ir.Value
	// Role is input, param, state, output, folded (the load stage's) or
	// arena.
	Role string
	// Offset is the arena offset (role arena).
	Offset int64
	Bytes  int64
	// Index is the allocation's place in Layout.Own (-1 for the arena).
	Index int
}

// Layout is the device memory of a plan.
type Layout struct {
	P *Plan
	// Own are the leaves and outputs, in declaration order.
	Own        []*Buf
	ArenaBytes int64
	bufs       map[*ir.Value]*Buf
}

// Buf returns the buffer of a parameter's value.
func (l *Layout) Buf(v *ir.Value) (*Buf, bool) {
	b, ok := l.bufs[v]
	return b, ok
}

// NewLayout lays out p's buffers and checks every generated kernel's
// parameters have one.
func NewLayout(p *Plan) (*Layout, error) {
	g := p.Plan.Graph
	if p.Plan.Arena == nil {
		return nil, fmt.Errorf("plan has no memory plan")
	}
	l := &Layout{P: p, ArenaBytes: p.Plan.Arena.Size, bufs: map[*ir.Value]*Buf{}}
	for _, role := range []struct {
		name string
		vs   []*ir.Value
	}{{"input", g.Inputs}, {"param", g.Params}, {"state", g.States}, {"output", g.Outputs}, {"folded", p.Plan.Folded()}} {
		for _, v := range role.vs {
			if plan.Root(v) != v || plan.InCache(v) {
				return nil, fmt.Errorf("%s %s is a view of another buffer", role.name, v.Name)
			}
			if err := checkFormat(v.Type.DType); err != nil {
				return nil, fmt.Errorf("%s %s: %w", role.name, v.Name, err)
			}
			n, err := storageBytes(g, v, p.Dims)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", role.name, v.Name, err)
			}
			b := &Buf{Value: v, Role: role.name, Bytes: n, Index: len(l.Own)}
			l.Own = append(l.Own, b)
			l.bufs[v] = b
		}
	}
	for _, k := range p.Kernels {
		if k.Err != nil {
			continue
		}
		for _, prm := range k.CUDA.Params {
			if m := prm.Map; m != nil {
				// The launch encodes it from the kernel's own buffers.
				for _, v := range []*ir.Value{m.K, m.V} {
					if !slices.ContainsFunc(k.CUDA.Params, func(q codegen.Param) bool { return q.Value == v }) {
						return nil, fmt.Errorf("kernel %s: tensor map %s: %s is not one of its buffer parameters", k.Plan.Name, prm.Name, v.Ref())
					}
				}
				continue
			}
			if prm.Value == nil {
				if prm.Dim == "" {
					return nil, fmt.Errorf("kernel %s: parameter %s is neither a buffer nor a dim", k.Plan.Name, prm.Name)
				}
				if _, ok := p.Dims[prm.Dim]; !ok {
					return nil, fmt.Errorf("kernel %s: parameter %s: dim %s is not bound", k.Plan.Name, prm.Name, prm.Dim)
				}
				continue
			}
			if _, ok := l.bufs[prm.Value]; ok {
				continue
			}
			off, ok := p.Plan.Arena.Offsets[prm.Value]
			if !ok {
				return nil, fmt.Errorf("kernel %s: parameter %s: %s is neither a leaf, an output nor in the arena", k.Plan.Name, prm.Name, prm.Value.Ref())
			}
			if err := checkFormat(prm.Value.Type.DType); err != nil {
				return nil, fmt.Errorf("kernel %s: %s: %w", k.Plan.Name, prm.Value.Ref(), err)
			}
			n, err := plan.Bytes(prm.Value, p.Dims)
			if err != nil {
				return nil, err
			}
			l.bufs[prm.Value] = &Buf{Value: prm.Value, Role: "arena", Offset: off, Bytes: n, Index: -1}
		}
	}
	return l, nil
}

// storageBytes is the size of the buffer holding a leaf or output
// (ir.Graph.StorageShape), as codegen/golang allocates it.
func storageBytes(g *ir.Graph, v *ir.Value, dims map[string]int64) (int64, error) {
	n, err := g.StorageShape(v).NumElements().Eval(dims)
	if err != nil {
		return 0, err
	}
	return n * v.Type.DType.Size(), nil
}

// Reference is what the CPU computes for one plan at one case: the leaves,
// RunPlan's values with every op rounded to its dtype (Kernels: the
// per-kernel reference) and the plan's graph interpreted in float64 without
// rounding (Layer: the whole-layer reference).
type Reference struct {
	P       *Plan
	Inputs  map[string]*interp.Tensor
	Kernels *interp.Result
	Layer   *interp.Result
}

// NewReference computes the per-kernel reference of p on inputs; layer is
// RunLayer's result for p's graph on the same inputs.
func NewReference(p *Plan, inputs map[string]*interp.Tensor, layer *interp.Result) (*Reference, error) {
	r := &Reference{P: p, Inputs: inputs, Layer: layer}
	var err error
	if r.Kernels, err = interp.RunPlan(p.Plan, p.Dims, inputs, interp.PlanOptions{Options: interp.Options{Round: true}}); err != nil {
		return nil, fmt.Errorf("RunPlan (%s): %w", PlanName(p.Fused), err)
	}
	return r, nil
}

// RunLayer interprets the layer as written (g, not a plan's rewritten
// graph) in float64 without rounding: the whole-layer reference.
func RunLayer(g *ir.Graph, dims map[string]int64, inputs map[string]*interp.Tensor) (*interp.Result, error) {
	res, err := interp.Run(g, dims, inputs, interp.Options{})
	if err != nil {
		return nil, fmt.Errorf("Run: %w", err)
	}
	return res, nil
}

// LeafBytes is the device content of a leaf other than a state.
func (r *Reference) LeafBytes(v *ir.Value) ([]byte, error) {
	t, ok := r.Inputs[v.Name]
	if !ok {
		return nil, fmt.Errorf("no input %s", v.Name)
	}
	return Encode(t.Data, v.Type.DType), nil
}

// StateBytes is the device content of state v before the step (after:
// false: the given tokens, and for a contiguous cache that an append writes
// the S new token rows poisoned) or after it, as the per-kernel reference
// (RunPlan, rounded) leaves it.
func (r *Reference) StateBytes(v *ir.Value, after bool) ([]byte, error) {
	return r.stateBytes(v, after, r.Kernels)
}

func (r *Reference) stateBytes(v *ir.Value, after bool, res *interp.Result) ([]byte, error) {
	g := r.P.Plan.Graph
	if after {
		t, ok := res.States[v.Name]
		if !ok {
			return nil, fmt.Errorf("no state %s after the step", v.Name)
		}
		return Encode(t.Data, v.Type.DType), nil
	}
	t, ok := r.Inputs[v.Name]
	if !ok {
		return nil, fmt.Errorf("no state %s", v.Name)
	}
	app := g.AppendOf(v)
	lay := v.Def.Attr.Layout
	if app == nil || (lay != nil && lay.Kind != ir.Contiguous) {
		return Encode(t.Data, v.Type.DType), nil
	}
	// Contiguous [2, B, G, T, Dh] into [2, B, G, T+S, Dh].
	sh, err := v.Type.Shape.Eval(r.P.Dims)
	if err != nil {
		return nil, err
	}
	grown, err := g.StorageShape(v).Eval(r.P.Dims) // [2, B, G, T+S, Dh]
	if err != nil {
		return nil, err
	}
	rows, tt, dh := sh[0]*sh[1]*sh[2], sh[3], sh[4]
	ts := grown[3]
	size := int(v.Type.DType.Size())
	out := make([]byte, rows*ts*dh*size)
	for i := range out {
		out[i] = Poison
	}
	src := Encode(t.Data, v.Type.DType)
	for row := range rows {
		copy(out[row*ts*dh*size:], src[row*tt*dh*size:(row+1)*tt*dh*size])
	}
	return out, nil
}

// ValueBytes is the per-kernel reference content of a computed value.
func (r *Reference) ValueBytes(v *ir.Value) ([]byte, error) {
	data, err := r.ValueData(v)
	if err != nil {
		return nil, err
	}
	return Encode(data, v.Type.DType), nil
}

// ValueData is the per-kernel reference of a computed value in the order
// its buffer holds it: row-major, or the plan's stored layout of it.
func (r *Reference) ValueData(v *ir.Value) ([]float64, error) {
	t, ok := r.Kernels.Values[v]
	if !ok {
		return nil, fmt.Errorf("the reference did not compute %s", v.Ref())
	}
	if l := r.P.Plan.Layouts[v]; l != nil {
		return l.Permute(t.Data, t.Shape)
	}
	return t.Data, nil
}

// Valid says which elements of v exist: nil for a dense value, else a
// function of the flat index (ragged positions past a sequence's length do
// not exist; where the sequence axis is v's packed token axis, a token's
// sequence is its own).
func (r *Reference) Valid(v *ir.Value) (func(int) bool, error) {
	rg := v.Ragged
	if rg == nil {
		return nil, nil
	}
	lens, err := r.lens(rg.Lens)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Ref(), err)
	}
	if rg.Less != nil {
		less, err := r.input(rg.Less)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Ref(), err)
		}
		if len(less) != len(lens)+1 {
			return nil, fmt.Errorf("%s: %d lengths, an indptr of %d", v.Ref(), len(lens), len(less))
		}
		for b := range lens {
			lens[b] -= less[b+1] - less[b]
		}
	}
	extra, err := rg.Extra.Eval(r.P.Dims)
	if err != nil {
		return nil, err
	}
	shape, err := v.Type.Shape.Eval(r.P.Dims)
	if err != nil {
		return nil, err
	}
	stride := func(ax int) int {
		s := 1
		for _, n := range shape[ax+1:] {
			s *= int(n)
		}
		return s
	}
	as, an := stride(rg.Axis), int(shape[rg.Axis])
	bs, bn := 0, 1
	if rg.Batch >= 0 {
		bs, bn = stride(rg.Batch), int(shape[rg.Batch])
	}
	seq := func(j int) int { return j }
	if p := v.Packed; p != nil && rg.Batch == p.Axis {
		s, err := r.packedSeqs(p, bn)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Ref(), err)
		}
		seq = func(j int) int { return s[j] }
	} else if bn > len(lens) {
		return nil, fmt.Errorf("%s: %d sequences, %d lengths", v.Ref(), bn, len(lens))
	}
	return func(i int) bool {
		b := 0
		if bs > 0 {
			b = seq(i / bs % bn)
		}
		return i/as%an < lens[b]+int(extra)
	}, nil
}

// packedSeqs is the sequence of each of the n tokens of a packed axis,
// from its indptr input: token j belongs to the b with indptr[b] <= j <
// indptr[b+1].
func (r *Reference) packedSeqs(p *ir.Packed, n int) ([]int, error) {
	indptr, err := r.input(p.Indptr)
	if err != nil {
		return nil, err
	}
	if len(indptr) == 0 || indptr[0] != 0 || indptr[len(indptr)-1] != n {
		return nil, fmt.Errorf("indptr %s = %v does not cover %d tokens", p.Indptr.Name, indptr, n)
	}
	out := make([]int, n)
	for b := 0; b+1 < len(indptr); b++ {
		if indptr[b+1] < indptr[b] {
			return nil, fmt.Errorf("indptr %s = %v decreases", p.Indptr.Name, indptr)
		}
		for j := indptr[b]; j < indptr[b+1]; j++ {
			out[j] = b
		}
	}
	return out, nil
}

// input is an i32 input's values.
func (r *Reference) input(v *ir.Value) ([]int, error) {
	t, ok := r.Inputs[plan.Root(v).Name]
	if !ok {
		return nil, fmt.Errorf("no input %s", plan.Root(v).Name)
	}
	out := make([]int, len(t.Data))
	for i, x := range t.Data {
		out[i] = int(x)
	}
	return out, nil
}

// lens evaluates a seqlens value (indptr, and last for a paged cache) on
// the inputs, as interp does.
func (r *Reference) lens(v *ir.Value) ([]int, error) {
	d := v.Def
	if d == nil || d.Op != ir.OpSeqLens {
		return nil, fmt.Errorf("lengths %s are not a layout's", v.Ref())
	}
	indptr, err := r.input(d.Args[0])
	if err != nil {
		return nil, err
	}
	lens := make([]int, len(indptr)-1)
	if len(d.Args) == 2 {
		last, err := r.input(d.Args[1])
		if err != nil {
			return nil, err
		}
		page := int(d.Attr.Num)
		for b := range lens {
			if n := indptr[b+1] - indptr[b]; n > 0 {
				lens[b] = (n-1)*page + last[b]
			}
		}
		return lens, nil
	}
	for b := range lens {
		lens[b] = indptr[b+1] - indptr[b]
	}
	return lens, nil
}

// AppendedBefore reports the states some kernel before kernel i appends
// to.
func AppendedBefore(p *Plan, i int) map[*ir.Value]bool {
	out := map[*ir.Value]bool{}
	for _, k := range p.Plan.Kernels[:i] {
		for _, o := range k.Outputs {
			if plan.InCache(o) {
				out[codegen.Buffer(o)] = true
			}
		}
	}
	return out
}

// IsState reports whether v is a state leaf.
func IsState(v *ir.Value) bool { return v.Def != nil && v.Def.Op == ir.OpState }

// Written lists the buffers kernel k writes (an appended state as its
// state), without repeats, in the order of its outputs.
func Written(k *plan.Kernel) []*ir.Value {
	var out []*ir.Value
	for _, o := range k.Outputs {
		if b := codegen.Buffer(o); !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}
