package golang

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// layer is what the generated package declares, worked out from the plan
// before any code is emitted.
type layer struct {
	name string
	dims []dimField
	bufs []buffer
	// field is the Layer field of every leaf and output value.
	field    map[*ir.Value]string
	arena    int64
	launches []launch
	ladder   *ladderModel
	// scratch is the paged pool's scratch page, past the planned pool.
	scratch int64
	// tensorList are the params and states as LoadSafetensors reads them.
	tensorList []tensor
	// loadOnly are the buffers of the params only the load stage reads
	// (plan.LoadOnly), which ReleaseParams frees.
	loadOnly []buffer
}

type dimField struct {
	Field, Dim string
	Planned    int64
}

// buffer is a device buffer the Layer allocates for a leaf or an output.
// Field names the accessor method; the Layer's field is unexported (see
// fieldName), so that no one rebinds a buffer under a captured graph.
type buffer struct {
	Field string
	Value *ir.Value
	Role  string // input, param, state, output or folded (the load stage's)
	Bytes int64
	// Extra is room the ladder's padding needs past the planned storage:
	// the scratch page of a paged pool, a page id per padded sequence.
	Extra int64
}

// fieldName is the Layer's unexported field of the buffer whose accessor
// is field.
func fieldName(field string) string { return "buf" + field }

// launch is one kernel launch of Forward.
type launch struct {
	Kernel *plan.Kernel
	Entry  string
	Block  int
	Args   []arg
}

// arg is one kernel argument: a Layer buffer, an arena offset or a dim.
type arg struct {
	Field  string  // a Layer buffer field
	Offset int64   // the arena offset when no other field is set
	Dim    string  // the Dims field of a dim argument
	Map    *mapArg // a tensor map's buffers
}

// mapArg is a tensor map argument (codegen.RowMap), encoded before the
// launch from its buffers' addresses.
type mapArg struct {
	K, V arg
	Dh   int64
}

// reserved are the exported names the generated package declares.
var reserved = []string{"Layer", "Dims", "Planned", "New", "Arena", "ArenaBytes", "Forward", "Capture", "Close",
	"Ladder", "Step", "StepInputs", "Buckets", "Synchronize", "Counts", "LoadSafetensors", "InitRandom", "Fold", "ReleaseParams"}

// newLayer checks the plan (kernels, launches, arena at bound dims) and
// the kernels' description, and lays out the generated package.
func newLayer(p *plan.Plan, dims map[string]int64, kernels []Kernel) (*layer, error) {
	g := p.Graph
	if p.Arena == nil {
		return nil, errors.New("plan has no memory plan (bind the dims)")
	}
	if len(kernels) != len(p.Kernels) {
		return nil, fmt.Errorf("%d kernel descriptions for %d plan kernels", len(kernels), len(p.Kernels))
	}
	// A dim may be 0 (a prefill over an empty cache, T=0): its buffers are
	// empty (runtime.Context.Alloc gives a null pointer), provided that
	// every kernel still launches a block.
	for _, d := range g.Dims {
		if n, ok := dims[d]; !ok || n < 0 {
			return nil, fmt.Errorf("dim %s is not bound to a size", d)
		}
	}
	l := &layer{name: g.Name, arena: p.Arena.Size, field: map[*ir.Value]string{}}
	ns, names, err := layerNames(g, dims)
	if err != nil {
		return nil, err
	}
	for _, d := range g.Dims {
		l.dims = append(l.dims, dimField{Field: ns.Dims[d], Dim: d, Planned: dims[d]})
	}
	for _, f := range ns.Buffers {
		l.field[f.Value] = f.Name
		l.bufs = append(l.bufs, buffer{Field: f.Name, Value: f.Value, Role: f.Role, Bytes: f.Bytes})
	}
	only := map[*ir.Value]bool{}
	for _, v := range p.LoadOnly() {
		only[v] = true
	}
	for _, b := range l.bufs {
		if only[b.Value] {
			l.loadOnly = append(l.loadOnly, b)
		}
	}
	if err := l.addFolded(p, names, dims); err != nil {
		return nil, err
	}
	if err := l.planLadder(g, dims); err != nil {
		return nil, err
	}
	if l.tensorList, err = l.tensors(g, dims); err != nil {
		return nil, err
	}
	for i, k := range p.Kernels {
		kd := kernels[i]
		if k.Launch == nil {
			return nil, fmt.Errorf("kernel %s has no launch plan", k.Name)
		}
		if gr := k.Launch.Grid; gr[0] < 1 || gr[1] < 1 || gr[2] < 1 {
			return nil, fmt.Errorf("kernel %s has an empty grid %v at these dims: a dim of 0 leaves it nothing to launch", k.Name, gr)
		}
		if len(kd.Entries) == 0 || kd.Block < 1 {
			return nil, fmt.Errorf("kernel %s: no entries or no block size", k.Name)
		}
		args, err := l.args(p, kd.Params)
		if err != nil {
			return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		for _, e := range kd.Entries {
			l.launches = append(l.launches, launch{Kernel: k, Entry: e, Block: kd.Block, Args: args})
		}
	}
	return l, nil
}

// addFolded gives every value the load stage computes and the step reads
// a buffer of its own, named after the value, or after the params it is
// computed from (wn_ai for 1 + wn_ai: WnAiFolded).
func (l *layer) addFolded(p *plan.Plan, names namer, dims map[string]int64) error {
	for _, v := range p.Folded() {
		n, err := storageBytes(p.Graph, v, dims)
		if err != nil {
			return fmt.Errorf("folded %s: %w", v.Ref(), err)
		}
		name := v.Name
		if name == "" {
			name = strings.Join(paramNames(v.Def), "_") + "_folded"
		}
		f := names.name(name, v.ID)
		l.field[v] = f
		l.bufs = append(l.bufs, buffer{Field: f, Value: v, Role: "folded", Bytes: n})
	}
	return nil
}

// paramNames returns the names of the params n reads, directly or through
// other ops, in argument order, each once.
func paramNames(n *ir.Node) []string {
	var out []string
	seen := map[*ir.Value]bool{}
	var walk func(n *ir.Node)
	walk = func(n *ir.Node) {
		for _, a := range n.Args {
			switch {
			case seen[a]:
			case a.Def.Op == ir.OpParam:
				out = append(out, a.Name)
			case !a.Def.Op.IsLeaf():
				walk(a.Def)
			}
			seen[a] = true
		}
	}
	walk(n)
	return out
}

// hasLoad reports whether the plan has a load stage.
func (l *layer) hasLoad() bool {
	for _, la := range l.launches {
		if la.Kernel.Load {
			return true
		}
	}
	return false
}

// args maps kernel parameters to Layer buffers, arena offsets and dims.
func (l *layer) args(p *plan.Plan, params []codegen.Param) ([]arg, error) {
	var out []arg
	for _, prm := range params {
		switch {
		case prm.Map != nil:
			k, err := l.bufferArg(p, prm.Name, prm.Map.K)
			if err != nil {
				return nil, err
			}
			v, err := l.bufferArg(p, prm.Name, prm.Map.V)
			if err != nil {
				return nil, err
			}
			out = append(out, arg{Map: &mapArg{K: k, V: v, Dh: prm.Map.Dh}})
		case prm.Value != nil:
			a, err := l.bufferArg(p, prm.Name, prm.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		case prm.Dim != "":
			f := l.dimField(prm.Dim)
			if f == "" {
				return nil, fmt.Errorf("parameter %s: no dim %s", prm.Name, prm.Dim)
			}
			out = append(out, arg{Dim: f})
		default:
			return nil, fmt.Errorf("parameter %s is neither a buffer, a dim nor a map", prm.Name)
		}
	}
	return out, nil
}

// bufferArg is the argument of parameter name's buffer v: a Layer field or
// an arena offset.
func (l *layer) bufferArg(p *plan.Plan, name string, v *ir.Value) (arg, error) {
	if f, ok := l.field[v]; ok {
		return arg{Field: f}, nil
	}
	off, ok := p.Arena.Offsets[v]
	if !ok {
		return arg{}, fmt.Errorf("parameter %s: value is neither a leaf, an output nor in the arena", name)
	}
	return arg{Offset: off}, nil
}

// planLadder analyzes the ladder and sizes the room its padding needs: one
// scratch page past a paged pool (page id P of the planned dims) and one
// page id per padded sequence past the planned page ids.
func (l *layer) planLadder(g *ir.Graph, dims map[string]int64) error {
	l.ladder = analyzeLadder(g)
	pg := l.ladder.pages
	if l.ladder.why != "" || pg == nil {
		return nil
	}
	pages, err := pg.pages.Eval(dims)
	if err != nil {
		return err
	}
	l.scratch = pages
	for i := range l.bufs {
		b := &l.bufs[i]
		switch {
		case b.Value == pg.state:
			b.Extra = b.Bytes / pages
		case b.Value == pg.state.Def.Attr.Layout.Indices:
			b.Extra = dims["B"] * 4
		}
	}
	return nil
}

func (l *layer) dimField(d string) string {
	for _, f := range l.dims {
		if f.Dim == d {
			return f.Field
		}
	}
	return ""
}
