package interp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fuser-dev/fuser/ir"
)

// RandomInputs returns deterministic random leaves for g: the same graph,
// dims and seed always give the same tensors. Unbound page-pool and
// page-index dims are derived first (see DeriveDims; pass the completed dims
// to Run). Float values are rounded to their declared dtype, so that a kernel
// reading them in that dtype sees exactly the same numbers.
//
//   - float inputs and contiguous states: uniform in [-1, 1).
//   - float params: of rank >= 2, uniform with variance 1/fan-in (fan-in: the
//     second-to-last extent), so that activations stay O(1); gather tables
//     uniform in [-1, 1); of rank <= 1 (norm weights, biases) uniform in
//     [0.5, 1.5).
//   - i32 inputs read by gather: ids uniform in [0, V).
//   - i32 inputs read by rope: token s of sequence b is at position
//     c_b + s, where c_b sums the cached tokens of b (before the step) over
//     the KV-cache states: the token extent T of a contiguous one, len_b - S
//     of a paged or ragged one.
//   - packed tokens (see ir.Packed): their indptr splits the N tokens over
//     the B sequences at random, except that with B >= 2 the last sequence
//     has no token and with B >= 3 the one before it exactly one (when N >=
//     1); a packed rope position of token n of sequence b is c_b + n -
//     indptr[b], c_b its cached tokens as above.
//   - other i32 leaves: uniform in [0, 16).
//   - paged and ragged states: the layout describes the cache after the
//     step's append of S tokens (see Run), so its lengths len_b count them:
//     sequence 0 holds exactly T + S tokens (T cached) and every other one a
//     uniform length in [max(S, 1), T + S] (0 when T + S = 0), that is
//     between 0 and T cached tokens (between 1 and T for a state no append
//     writes, S = 0). Appending packed tokens, S is each sequence's own
//     count qlen_b and the lower bound qlen_b (an empty sequence may hold
//     no token at all). A paged pool is filled with random values everywhere,
//     unused slots and the slots the new tokens will take included; its
//     indices are distinct pages of the pool in random order: first each
//     sequence's ceil(len_b/page) pages, then unused ones up to N. A ragged
//     buffer is [2, G, sum len_b, Dh], random everywhere, the rows of the
//     new tokens included.
func RandomInputs(g *ir.Graph, dims map[string]int64, seed int64) (map[string]*Tensor, error) {
	return RandomInputsWith(g, dims, seed, RandomOptions{})
}

// RandomOptions change what RandomInputsWith draws.
type RandomOptions struct {
	// FullLengths gives every sequence of a paged or ragged cache T + S
	// tokens, as sequence 0 has, instead of a random length: a benchmark's
	// batch then moves the bytes the cost model counts (B·T cached tokens).
	FullLengths bool
	// QLens, when set, splits the packed tokens of the indptr input it
	// names (qo_indptr) as given, a count per sequence summing to the
	// tokens, instead of at random.
	QLens map[string][]int
}

// RandomInputsWith is RandomInputs with options.
func RandomInputsWith(g *ir.Graph, dims map[string]int64, seed int64, opt RandomOptions) (map[string]*Tensor, error) {
	full, _, err := DeriveDims(g, dims)
	if err != nil {
		return nil, err
	}
	gen := &generator{
		g: g, dims: full, users: g.Users(), opt: opt,
		rng:      rand.New(rand.NewPCG(uint64(seed), 0x5eed_f05e)),
		out:      map[string]*Tensor{},
		lens:     map[*ir.Value][]int{},
		appended: map[*ir.Value][]int{},
		qlens:    map[*ir.Value][]int{},
	}
	for _, v := range g.Inputs {
		if v.Packed != nil {
			if err := gen.packedIndptr(v); err != nil {
				return nil, fmt.Errorf("input %s: %w", v.Name, err)
			}
		}
	}
	for _, v := range g.States {
		if l := v.Def.Attr.Layout; l != nil && l.Kind != ir.Contiguous {
			if err := gen.layoutState(v); err != nil {
				return nil, fmt.Errorf("state %s: %w", v.Name, err)
			}
		}
	}
	for _, group := range [][]*ir.Value{g.Inputs, g.Params, g.States} {
		for _, v := range group {
			if gen.out[v.Name] != nil {
				continue
			}
			if err := gen.leaf(v); err != nil {
				return nil, fmt.Errorf("%s %s: %w", v.Def.Op, v.Name, err)
			}
		}
	}
	return gen.out, nil
}

// generator holds the state of one RandomInputs call.
type generator struct {
	opt   RandomOptions
	g     *ir.Graph
	dims  map[string]int64
	users map[*ir.Value][]*ir.Node
	rng   *rand.Rand
	out   map[string]*Tensor
	// lens are the sequence lengths chosen for each layout state, after
	// the step's append; appended the tokens the step appends to each
	// sequence; qlens the tokens per sequence of each packed indptr.
	lens     map[*ir.Value][]int
	appended map[*ir.Value][]int
	qlens    map[*ir.Value][]int
}

// leaf generates an input, param or contiguous state.
func (gen *generator) leaf(v *ir.Value) error {
	shape, err := v.Type.Shape.Eval(gen.dims)
	if err != nil {
		return err
	}
	if v.Type.DType == ir.I32 {
		return gen.intLeaf(v, shape)
	}
	lo, hi := -1.0, 1.0
	if v.Def.Op == ir.OpParam && !gen.readBy(v, ir.OpGather, 0) {
		if len(shape) >= 2 {
			hi = math.Sqrt(3 / float64(max(shape[len(shape)-2], 1)))
			lo = -hi
		} else {
			lo, hi = 0.5, 1.5
		}
	}
	gen.out[v.Name] = gen.uniform(shape, lo, hi, v.Type.DType)
	return nil
}

// uniform returns a tensor of values uniform in [lo, hi) rounded to dt.
func (gen *generator) uniform(shape []int, lo, hi float64, dt ir.DType) *Tensor {
	t := New(shape...)
	for i := range t.Data {
		t.Data[i] = Round(lo+(hi-lo)*gen.rng.Float64(), dt)
	}
	return t
}

// readBy reports whether v is argument i of a node of op op.
func (gen *generator) readBy(v *ir.Value, op ir.Op, i int) bool {
	return gen.reader(v, op, i) != nil
}

func (gen *generator) reader(v *ir.Value, op ir.Op, i int) *ir.Node {
	for _, n := range gen.users[v] {
		if n.Op == op && len(n.Args) > i && n.Args[i] == v {
			return n
		}
	}
	return nil
}

// intLeaf generates an i32 leaf: gather ids, rope positions or small ints.
func (gen *generator) intLeaf(v *ir.Value, shape []int) error {
	t := New(shape...)
	if n := gen.reader(v, ir.OpGather, 1); n != nil {
		vs, err := n.Args[0].Type.Shape.Eval(gen.dims)
		if err != nil {
			return err
		}
		if vs[0] < 1 {
			return fmt.Errorf("gather table %s has no rows", n.Args[0].Ref())
		}
		for i := range t.Data {
			t.Data[i] = float64(gen.rng.IntN(vs[0]))
		}
	} else if p := v.Packed; p != nil && gen.readBy(v, ir.OpRope, 1) {
		if err := gen.packedPositions(t, p); err != nil {
			return err
		}
	} else if gen.readBy(v, ir.OpRope, 1) && len(shape) == 2 {
		for b := range shape[0] {
			c, err := gen.cached(b)
			if err != nil {
				return err
			}
			for s := range shape[1] {
				t.Data[b*shape[1]+s] = float64(c + s)
			}
		}
	} else {
		for i := range t.Data {
			t.Data[i] = float64(gen.rng.IntN(16))
		}
	}
	gen.out[v.Name] = t
	return nil
}

// cached returns the number of tokens cached for sequence b over every
// KV-cache state.
func (gen *generator) cached(b int) (int, error) {
	total := 0
	for _, v := range gen.g.States {
		shape, err := v.Type.Shape.Eval(gen.dims)
		if err != nil {
			return 0, err
		}
		if len(shape) != 5 || shape[0] != 2 {
			continue
		}
		if lens, ok := gen.lens[v]; ok {
			if b < len(lens) {
				total += lens[b] - gen.appended[v][b]
			}
			continue
		}
		total += shape[3]
	}
	return total, nil
}
