package interp

import (
	"fmt"
	"math"
	"runtime/debug"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// PlanOptions controls how RunPlan computes.
type PlanOptions struct {
	Options
	// Br and Bc override the attention tiles (query rows × keys); 0 takes
	// them from the kernel's Launch.Tile, or 64 without one.
	Br, Bc int
	// Splits overrides the split-KV count of decode attention kernels; 0
	// takes it from Launch.Splits.
	Splits int
	// CrossCheck, when positive, also computes every row kernel and every
	// attention node op by op with the interpreter's semantics on the same
	// inputs, and fails when an output differs from the kernel algorithm's
	// by more than this relative error (max |diff| / max |value|).
	CrossCheck float64
	// FlashStats, when not nil, accumulates the work of the attention
	// kernels (see FlashStats).
	FlashStats *FlashStats
}

// RunPlan executes one step of a kernel plan: the kernels in order, each
// reading only the values it lists in its Inputs (through the views that
// reinterpret them) and writing the values it lists in its Outputs, with the
// algorithm of its strategy:
//
//   - row: the one-pass-per-row algorithm of the generated row kernels:
//     for each row, the element-wise ops leading to the row reduction while
//     it accumulates (sum, max, mean, an online softmax, top-k), then the
//     element-wise tail; only the kernel's outputs are stored whole.
//   - attention: FlashAttention (see FlashAttention): FlashAttention-2
//     tiling for a prefill Launch.Variant, split-KV Flash-Decoding with a
//     log-sum-exp merge for a decode one, the cascade's shared prefix as one
//     more partial.
//   - gemm, copy, reduce, append: the kernel's ops one by one with the
//     interpreter's semantics.
//
// inputs are given as to Run, and so are the results: the outputs, the
// states after the step and, in Values, the leaves and every value a kernel
// wrote (values that live only inside a kernel are not stored). Besides the
// errors Run reports, RunPlan reports plan bugs: a kernel reading a value it
// neither lists nor computes, a value read before any kernel writes it, a
// listed output the kernel does not compute, a value written twice, a graph
// output no kernel writes, a missing layout input.
// The only value a kernel reads without listing it is the cache an append
// writes into (a state leaf).
// Options.Round rounds every op result to its dtype as Run does; the flash
// and one-pass row algorithms round the values they produce the same way.
func RunPlan(p *plan.Plan, dims map[string]int64, inputs map[string]*Tensor, opt PlanOptions) (res *Result, err error) {
	if p == nil || p.Graph == nil {
		return nil, fmt.Errorf("interp: RunPlan needs a plan with its graph")
	}
	if err := p.Verify(); err != nil {
		return nil, fmt.Errorf("interp: invalid plan: %w", err)
	}
	pr := newPlanRun(p, dims, opt)
	var cur *kernelRun
	defer func() {
		if r := recover(); r != nil {
			where := "loading the leaves"
			if cur != nil {
				where = fmt.Sprintf("kernel %s at %s", cur.k.Name, cur.m.at)
			}
			res, err = nil, fmt.Errorf("interp: internal error in %s: %v\n%s", where, r, debug.Stack())
		}
	}()
	if err := pr.load(inputs); err != nil {
		return nil, err
	}
	for _, k := range p.Kernels {
		cur = pr.newKernelRun(k)
		if err := cur.run(); err != nil {
			return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
	}
	return pr.result()
}

func newPlanRun(p *plan.Plan, dims map[string]int64, opt PlanOptions) *planRun {
	return &planRun{
		p: p, opt: opt,
		gm: &machine{
			g: p.Graph, dims: dims, opt: opt.Options,
			vals:   map[*ir.Value]*Tensor{},
			states: map[*ir.Value]*stateStore{},
			valids: map[*ir.Value]*validity{},
		},
		mem:    map[*ir.Value]*Tensor{},
		writer: map[*ir.Value]*plan.Kernel{},
	}
}

// load checks and stores the leaves, as Run does.
func (pr *planRun) load(inputs map[string]*Tensor) error {
	if err := pr.gm.loadLeaves(inputs); err != nil {
		return err
	}
	for v, t := range pr.gm.vals {
		pr.mem[v] = t
	}
	return nil
}

// result collects the outputs and the states after the step.
func (pr *planRun) result() (*Result, error) {
	g := pr.p.Graph
	res := &Result{Outputs: map[string]*Tensor{}, States: map[string]*Tensor{}, Values: pr.mem}
	for _, o := range g.Outputs {
		t, ok := pr.mem[o]
		if !ok {
			return nil, fmt.Errorf("output %s is written by no kernel", o.Ref())
		}
		res.Outputs[o.Name] = t
	}
	for _, s := range g.States {
		st := pr.gm.states[s]
		res.States[s.Name] = st.phys
		if st.after != nil {
			res.States[s.Name] = st.after
		}
	}
	return res, nil
}

// planRun is the state of one RunPlan: the memory the kernels share.
type planRun struct {
	p   *plan.Plan
	opt PlanOptions
	gm  *machine // holds the leaves and the states
	// mem holds the values in memory: the leaves and the kernels' outputs.
	mem    map[*ir.Value]*Tensor
	writer map[*ir.Value]*plan.Kernel
}

// newMachine returns an empty machine sharing the states and the leaves'
// validity (a paged or ragged state leaf's view holds its cached tokens).
func (pr *planRun) newMachine() *machine {
	m := &machine{
		g: pr.p.Graph, dims: pr.gm.dims, opt: pr.gm.opt,
		vals:   map[*ir.Value]*Tensor{},
		states: pr.gm.states,
		valids: map[*ir.Value]*validity{},
	}
	for v, vd := range pr.gm.valids {
		if v.Def != nil && v.Def.Op.IsLeaf() {
			m.valids[v] = vd
		}
	}
	return m
}

// kernelRun executes one kernel in a machine of its own, which sees only
// what the kernel reads.
type kernelRun struct {
	pr       *planRun
	k        *plan.Kernel
	m        *machine
	inside   map[*ir.Node]bool
	declared map[*ir.Value]bool
}

func (pr *planRun) newKernelRun(k *plan.Kernel) *kernelRun {
	kr := &kernelRun{pr: pr, k: k, m: pr.newMachine(), inside: map[*ir.Node]bool{}, declared: map[*ir.Value]bool{}}
	for _, n := range k.Nodes {
		kr.inside[n] = true
	}
	for _, v := range k.Inputs {
		kr.declared[v] = true
	}
	return kr
}

// run computes the kernel and publishes its outputs.
func (kr *kernelRun) run() error {
	// A kernel that reads or writes a paged or ragged cache must list the
	// page table among its inputs: the GPU kernel needs it to find tokens.
	if err := kr.checkLayout(); err != nil {
		return err
	}
	done := false
	if kr.k.Strategy == plan.Row {
		var err error
		if done, err = kr.rows(); err != nil {
			return err
		}
	}
	if !done {
		for _, n := range kr.k.Nodes {
			var err error
			if n.Op == ir.OpAttention {
				err = kr.attention(n)
			} else {
				err = kr.stepNode(n)
			}
			if err != nil {
				return err
			}
		}
	}
	if err := kr.crossCheck(); err != nil {
		return err
	}
	for _, o := range kr.k.Outputs {
		if !kr.inside[o.Def] {
			return fmt.Errorf("lists %s among its outputs but does not compute it", o.Ref())
		}
		t, ok := kr.m.vals[o]
		if !ok {
			return fmt.Errorf("internal: output %s was not computed", o.Ref())
		}
		if w := kr.pr.writer[o]; w != nil {
			return fmt.Errorf("writes %s, which kernel %s wrote already", o.Ref(), w.Name)
		}
		if _, ok := kr.pr.mem[o]; ok {
			return fmt.Errorf("writes %s, which is a leaf", o.Ref())
		}
		kr.pr.mem[o] = t
		kr.pr.writer[o] = kr.k
	}
	return nil
}

// eval returns the tensor of v as the kernel sees it: computed by the
// kernel, read from memory when the kernel lists it among its inputs, or
// computed from those through views (reshape, transpose, split, slice,
// constants, sequence lengths).
func (kr *kernelRun) eval(v *ir.Value) (*Tensor, error) {
	if t, ok := kr.m.vals[v]; ok {
		return t, nil
	}
	d := v.Def
	switch {
	case kr.inside[d]:
		return nil, fmt.Errorf("internal: %s is read before the kernel computes it", v.Ref())
	case kr.declared[v]:
		t, err := kr.pr.fetch(v)
		if err != nil {
			return nil, err
		}
		kr.m.vals[v] = t
		return t, nil
	case plan.IsView(d.Op) && !d.Op.IsLeaf():
		if err := kr.stepNode(d); err != nil {
			return nil, err
		}
		return kr.m.vals[v], nil
	}
	return nil, fmt.Errorf("reads %s, which it neither lists among its inputs nor computes (a plan bug)", v.Ref())
}

// lensOf evaluates the lengths of every ragged argument and result of n,
// and the indptrs of the packed tokens it pairs with their sequences,
// which the interpreter's ops read.
func (kr *kernelRun) lensOf(n *ir.Node) error {
	for _, p := range n.SeqIndptrs() {
		if _, err := kr.eval(p); err != nil {
			return fmt.Errorf("sequences of %s: %w", n.Outs[0].Ref(), err)
		}
	}
	for _, vs := range [][]*ir.Value{n.Args, n.Outs} {
		for _, v := range vs {
			if r := v.Ragged; r != nil {
				if _, ok := kr.m.valids[v]; ok {
					continue
				}
				if _, err := kr.eval(r.Lens); err != nil {
					return fmt.Errorf("lengths of %s: %w", v.Ref(), err)
				}
			}
		}
	}
	return nil
}

// stepNode computes one node with the interpreter's semantics, from
// arguments the kernel may see.
func (kr *kernelRun) stepNode(n *ir.Node) error {
	for i, a := range n.Args {
		if n.Op == ir.OpAppend && i == 0 {
			// The cache an append writes into: the state leaf itself.
			if a.Def == nil || a.Def.Op != ir.OpState {
				return fmt.Errorf("%s: append into %s, which is not a state", n, a.Ref())
			}
			kr.m.vals[a] = kr.pr.mem[a]
			continue
		}
		if _, err := kr.eval(a); err != nil {
			return err
		}
	}
	if err := kr.lensOf(n); err != nil {
		return err
	}
	kr.m.at = n
	if err := kr.m.step(n); err != nil {
		return fmt.Errorf("%s: %w", n, err)
	}
	return nil
}

// fetch returns a value a kernel lists among its inputs, from memory: the
// value itself, or the views (a split part, a reshape, ...) of the buffer a
// kernel or the caller wrote. Nothing else the fetch computes becomes
// visible to the kernel.
func (pr *planRun) fetch(v *ir.Value) (*Tensor, error) {
	if t, ok := pr.mem[v]; ok {
		return t, nil
	}
	fm := pr.newMachine()
	if err := pr.fetchInto(fm, v, false); err != nil {
		return nil, err
	}
	return fm.vals[v], nil
}

func (pr *planRun) fetchInto(fm *machine, v *ir.Value, lens bool) error {
	if _, ok := fm.vals[v]; ok {
		return nil
	}
	if t, ok := pr.mem[v]; ok {
		fm.vals[v] = t
		return nil
	}
	d := v.Def
	if d == nil || d.Op.IsLeaf() || !plan.IsView(d.Op) || len(d.Args) == 0 || (d.Op == ir.OpSeqLens && !lens) {
		return fmt.Errorf("reads %s before any kernel writes it (a plan bug)", v.Ref())
	}
	for _, a := range d.Args {
		if err := pr.fetchInto(fm, a, lens || d.Op == ir.OpSeqLens); err != nil {
			return err
		}
	}
	for _, vs := range [][]*ir.Value{d.Args, d.Outs} {
		for _, x := range vs {
			if r := x.Ragged; r != nil {
				if _, ok := fm.valids[x]; !ok {
					if err := pr.fetchInto(fm, r.Lens, true); err != nil {
						return err
					}
				}
			}
		}
	}
	fm.at = d
	if err := fm.step(d); err != nil {
		return fmt.Errorf("%s: %w", d, err)
	}
	return nil
}

// store keeps the results of a node computed by a kernel algorithm as step
// keeps the interpreter's: checked against their shapes, zero where a
// ragged result has no position, rounded when asked.
func (kr *kernelRun) store(n *ir.Node, outs []*Tensor) error {
	if len(outs) != len(n.Outs) {
		return fmt.Errorf("internal: %s computed %d results, want %d", n, len(outs), len(n.Outs))
	}
	for i, o := range n.Outs {
		shape, err := kr.m.shape(o)
		if err != nil {
			return err
		}
		t := outs[i]
		if !t.SameShape(shape) || len(t.Data) != numElements(shape) {
			return fmt.Errorf("internal: result %s has shape %v, want %v", o.Ref(), t.Shape, shape)
		}
		vd, err := kr.m.validity(o, t.Shape)
		if err != nil {
			return err
		}
		vd.zero(t)
		if kr.m.opt.Round {
			roundAll(t, o.Type.DType)
		}
		kr.m.vals[o] = t
	}
	return nil
}

// crossCheck recomputes a row kernel or an attention node op by op and
// compares the outputs, when PlanOptions.CrossCheck asks for it.
func (kr *kernelRun) crossCheck() error {
	tol := kr.pr.opt.CrossCheck
	if tol <= 0 {
		return nil
	}
	check := kr.k.Strategy == plan.Row
	for _, n := range kr.k.Nodes {
		switch n.Op {
		case ir.OpAttention:
			check = true
		case ir.OpAppend:
			return nil // it writes the state: it runs once
		}
	}
	if !check {
		return nil
	}
	ref := kr.pr.newKernelRun(kr.k)
	for _, n := range kr.k.Nodes {
		if err := ref.stepNode(n); err != nil {
			return fmt.Errorf("cross-check: %w", err)
		}
	}
	for _, o := range kr.k.Outputs {
		got, want := kr.m.vals[o], ref.m.vals[o]
		if got == nil || want == nil {
			continue // reported when the outputs are published
		}
		if e := relativeError(got.Data, want.Data); !(e <= tol) {
			return fmt.Errorf("cross-check: %s differs from the op-by-op result by %.3g (relative), more than %g", o.Ref(), e, tol)
		}
	}
	return nil
}

// relativeError is max |a-b| / max |b|, 0 when both are equal (infinities
// and NaNs included), +Inf when only one side is not finite.
func relativeError(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	num, den := 0.0, 0.0
	for i := range a {
		x, y := a[i], b[i]
		if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			if x == y || (math.IsNaN(x) && math.IsNaN(y)) {
				continue
			}
			return math.Inf(1)
		}
		num = max(num, math.Abs(x-y))
		den = max(den, math.Abs(y))
	}
	if den == 0 {
		return num
	}
	return num / den
}

// checkLayout reports a layout input a kernel needs but does not list: the
// page table (or indptr) of every paged or ragged cache it appends to or
// reads, of the lengths of every ragged value it reads or writes, and the
// indptr of packed tokens its ops pair with their sequences
// (ir.Node.SeqIndptrs).
func (kr *kernelRun) checkLayout() error {
	need := map[*ir.Value]bool{}
	var order []*ir.Value
	add := func(vs ...*ir.Value) {
		for _, v := range vs {
			if v != nil && !need[v] {
				need[v] = true
				order = append(order, v)
			}
		}
	}
	addLayout := func(l *ir.Layout) {
		if l != nil && l.Kind != ir.Contiguous {
			add(l.Indptr, l.Indices, l.Last)
		}
	}
	addLens := func(v *ir.Value) {
		if r := v.Ragged; r != nil && r.Lens.Def != nil {
			for _, a := range r.Lens.Def.Args {
				add(plan.Sources(a)...)
			}
		}
	}
	for _, n := range kr.k.Nodes {
		for i, a := range n.Args {
			if n.Op == ir.OpAppend && i == 0 {
				addLayout(a.Def.Attr.Layout)
				continue
			}
			addLens(a)
			for _, src := range plan.Sources(a) {
				if r := plan.Root(src); plan.InCache(r) {
					addLayout(r.Def.Args[0].Def.Attr.Layout)
				}
			}
		}
		for _, o := range n.Outs {
			addLens(o)
		}
		add(n.SeqIndptrs()...)
	}
	for _, v := range order {
		if !kr.declared[v] && !kr.inside[v.Def] {
			return fmt.Errorf("needs the layout input %s but does not list it among its inputs (a plan bug)", v.Ref())
		}
	}
	return nil
}
