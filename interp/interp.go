package interp

import (
	"fmt"
	"runtime/debug"

	"github.com/fuser-dev/fuser/ir"
)

// Options controls how Run computes.
type Options struct {
	// Round rounds every leaf and every op result to its declared dtype
	// (see Round), emulating kernels that store each value in that dtype.
	// Without it every value is exact float64 arithmetic.
	Round bool
}

// Result holds everything one step of the layer computed.
type Result struct {
	// Outputs are the declared outputs, by name.
	Outputs map[string]*Tensor
	// States are the state tensors after the step, by name, in their
	// physical layout, with the tokens written by append (see Run). A state
	// that is not appended to is returned as given.
	States map[string]*Tensor
	// Values holds every value of the graph: leaves (a state leaf as its
	// logical [2, B, G, T, Dh] view), intermediates and outputs. Positions
	// of a ragged value past a sequence's length hold 0.
	Values map[*ir.Value]*Tensor
}

// Run executes one step of g for the bound dims on the given leaves and
// returns every value. inputs holds one tensor per input, param and state,
// keyed by its declared name, each with its declared shape, except states
// with a layout, which are given physically.
//
// A paged or ragged layout follows FlashInfer's convention: it describes
// each sequence's cache AFTER this step's append (the scheduler allocates
// room for the new tokens before the step). Its length len_b counts the S
// tokens the step appends to the state (S = 0 when no append writes it):
// positions 0..len_b-S-1 are the cached tokens, which the state's logical
// [2, B, G, T, Dh] view holds (len_b - S <= T, and len_b >= S), and append
// writes the new tokens at positions len_b-S..len_b-1 through the same
// table. A state that is only read uses the lengths as they are (len_b <= T).
//
//   - paged: a pool [Pages, 2, G, page, Dh]; token t of sequence b lives in
//     page indices[indptr[b] + t/page] at slot t%page. indptr[0] must be 0,
//     indptr non-decreasing, indptr[B] <= len(indices) (entries past
//     indptr[B] are not used), every page index in [0, Pages), and last[b]
//     in [1, page] (0 for a sequence with no page). The sequence holds
//     len_b = (indptr[b+1]-indptr[b]-1)*page + last[b] tokens (0 with no
//     page).
//   - ragged: a buffer [2, G, N, Dh] with N = indptr[B]; token t of sequence
//     b is row indptr[b] + t. indptr[0] must be 0 and indptr non-decreasing;
//     len_b = indptr[b+1] - indptr[b].
//
// The ops see the state through its logical view, and append returns the
// whole caches [B, G, T+S, Dh] of len_b tokens each (T+S for a contiguous
// state, whose S new tokens follow its T cached ones). Result.States holds
// each appended state after the step:
//
//   - contiguous: the cache [2, B, G, T+S, Dh].
//   - paged: the pool, same shape, with the new tokens written into their
//     slots; every other slot is unchanged. The page table is unchanged too:
//     it already described the cache after the step. A new token may not
//     land on a slot that holds another token, cached or new, of any
//     sequence.
//   - ragged: the buffer, same shape, with the new tokens written into the
//     last S rows of each sequence, indptr[b+1]-S..indptr[b+1]-1.
//
// Run reports missing, unknown or misshapen inputs, bad page tables
// (lengths below S or cached tokens above T included), unbound dims,
// out-of-range gather ids and other runtime errors as errors.
func Run(g *ir.Graph, dims map[string]int64, inputs map[string]*Tensor, opt Options) (res *Result, err error) {
	m := &machine{
		g: g, dims: dims, opt: opt,
		vals:   map[*ir.Value]*Tensor{},
		states: map[*ir.Value]*stateStore{},
		valids: map[*ir.Value]*validity{},
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("interp: internal error at %s: %v\n%s", m.at, r, debug.Stack())
		}
	}()
	if err := m.loadLeaves(inputs); err != nil {
		return nil, err
	}
	for _, n := range g.Nodes {
		if n.Op.IsLeaf() {
			continue
		}
		m.at = n
		if err := m.step(n); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
	}
	res = &Result{Outputs: map[string]*Tensor{}, States: map[string]*Tensor{}, Values: m.vals}
	for _, o := range g.Outputs {
		res.Outputs[o.Name] = m.vals[o]
	}
	for _, s := range g.States {
		st := m.states[s]
		res.States[s.Name] = st.phys
		if st.after != nil {
			res.States[s.Name] = st.after
		}
	}
	return res, nil
}

// machine is the state of one Run.
type machine struct {
	g      *ir.Graph
	dims   map[string]int64
	opt    Options
	vals   map[*ir.Value]*Tensor
	states map[*ir.Value]*stateStore
	valids map[*ir.Value]*validity
	at     *ir.Node // the node being executed, for internal errors
}

// maxElements bounds the size of one tensor.
const maxElements = 1 << 31

// shape evaluates the shape of v for the bound dims.
func (m *machine) shape(v *ir.Value) ([]int, error) {
	return m.evalShape(v.Type.Shape)
}

func (m *machine) evalShape(s ir.Shape) ([]int, error) {
	shape, err := s.Eval(m.dims)
	if err != nil {
		return nil, err
	}
	n := 1
	for _, d := range shape {
		if d != 0 && n > maxElements/d {
			return nil, fmt.Errorf("shape %v is too large for the reference interpreter", shape)
		}
		n *= d
	}
	return shape, nil
}

// dim evaluates one dim.
func (m *machine) dim(d ir.Dim) (int, error) {
	v, err := d.Eval(m.dims)
	return int(v), err
}

// arg returns the computed tensor of v.
func (m *machine) arg(v *ir.Value) (*Tensor, error) {
	t, ok := m.vals[v]
	if !ok {
		return nil, fmt.Errorf("value %s is used before it is computed", v.Ref())
	}
	return t, nil
}

// step executes one node and stores its results, zeroing non-existing
// positions of ragged results and rounding when asked.
func (m *machine) step(n *ir.Node) error {
	args := make([]*Tensor, len(n.Args))
	for i, a := range n.Args {
		t, err := m.arg(a)
		if err != nil {
			return err
		}
		args[i] = t
	}
	outShapes := make([][]int, len(n.Outs))
	for i, o := range n.Outs {
		s, err := m.shape(o)
		if err != nil {
			return err
		}
		outShapes[i] = s
	}
	outs, err := m.exec(n, args, outShapes)
	if err != nil {
		return err
	}
	for i, o := range n.Outs {
		t := outs[i]
		if !t.SameShape(outShapes[i]) || len(t.Data) != numElements(outShapes[i]) {
			return fmt.Errorf("internal: result %s has shape %v, want %v", o.Ref(), t.Shape, outShapes[i])
		}
		vd, err := m.validity(o, t.Shape)
		if err != nil {
			return err
		}
		vd.zero(t)
		if m.opt.Round {
			roundAll(t, o.Type.DType)
		}
		m.vals[o] = t
	}
	return nil
}

// exec computes the results of one node.
func (m *machine) exec(n *ir.Node, args []*Tensor, shapes [][]int) ([]*Tensor, error) {
	one := func(t *Tensor, err error) ([]*Tensor, error) {
		if err != nil {
			return nil, err
		}
		return []*Tensor{t}, nil
	}
	out := shapes[0]
	switch n.Op {
	case ir.OpConst:
		return []*Tensor{Scalar(n.Attr.Num)}, nil
	case ir.OpSeqLens:
		return one(m.seqLensNode(n, args))
	case ir.OpCast:
		return one(cast(args[0], n.Attr.To), nil)
	case ir.OpNeg, ir.OpExp, ir.OpLog, ir.OpSqrt, ir.OpRsqrt, ir.OpTanh, ir.OpSilu, ir.OpGelu, ir.OpSigmoid, ir.OpSoftcap:
		return one(unary(n.Op, n.Attr.Num, args[0]), nil)
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMax, ir.OpMin:
		return one(binary(n.Op, args[0], args[1], out))
	case ir.OpCausal, ir.OpWindow:
		return one(m.mask(n, args[0]))
	case ir.OpRope:
		if n.Args[0].Packed != nil {
			return one(packedRope(args[0], args[1], n.Attr.Num))
		}
		return one(rope(args[0], args[1], n.Attr.Num))
	case ir.OpReshape:
		return one(reshape(args[0], out))
	case ir.OpTranspose:
		return one(transpose(args[0], n.Attr.Perm), nil)
	case ir.OpSplit:
		return split(args[0], n.Attr.Axis, shapes)
	case ir.OpConcat:
		return one(concat(args, n.Attr.Axis, out))
	case ir.OpSlice:
		return one(m.slice(n, args[0], out))
	case ir.OpGather:
		return one(gather(args[0], args[1]))
	case ir.OpSum, ir.OpReduceMax, ir.OpMean:
		return one(m.reduce(n, args[0]))
	case ir.OpSoftmax:
		return one(m.softmax(n, args[0]))
	case ir.OpTopK:
		return one(m.topk(n, args[0]))
	case ir.OpMatmul:
		if n.Args[0].Packed != nil && len(args[1].Shape) > 2 {
			return one(m.packedMatmul(n, args[0], args[1], out))
		}
		return one(m.matmul(n, args[0], args[1], out))
	case ir.OpAppend:
		return m.append(n, args, out)
	case ir.OpAttention:
		return one(m.attention(n, args, out))
	}
	return nil, fmt.Errorf("op %s is not supported by the interpreter", n.Op)
}
