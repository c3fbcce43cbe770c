// Package passes turns a typed graph into a kernel plan. The passes are one
// table, run in order; each logs why each candidate fusion fired or did
// not. The graph is verified after every pass, and the plan after every pass
// that leaves it whole (fold, epilogue and rows leave ops no kernel holds
// yet).
package passes

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// Pass is one step of the pipeline.
type Pass struct {
	// Name is the pass's name in dumps and errors (--dump-after=NAME).
	Name string
	// Doc says what the pass does, in one line.
	Doc string
	// Bound passes need the dims bound and are skipped without them.
	Bound bool
	// Partial passes leave ops no kernel holds yet: the plan is verified
	// after every other pass.
	Partial bool
	// Run transforms the state and returns how many changes it made.
	Run func(*State) (int, error)
}

// Decision is one logged fusion decision, for `fuser plan --explain`.
type Decision struct {
	Pass   string
	Fired  bool
	Reason string
}

// verbs are the words a pass's decisions print where they are not "fused"
// and "not fused": the layout pass stores a value permuted or keeps it,
// the launch pass logs the fallbacks it takes.
var verbs = map[string][2]string{"layout": {"stored", "kept"}, "launch": {"chose", "fallback"}}

// String prints the decision in columns: the pass, "fused" or "not fused"
// (the pass's own verbs), the reason.
func (d Decision) String() string {
	v, ok := verbs[d.Pass]
	if !ok {
		v = [2]string{"fused", "not fused"}
	}
	verb := v[1]
	if d.Fired {
		verb = v[0]
	}
	return fmt.Sprintf("%-12s %-9s %s", d.Pass, verb, d.Reason)
}

// State is what the passes work on.
type State struct {
	Graph  *ir.Graph
	Plan   *plan.Plan
	Dims   map[string]int64
	Target plan.Target
	// DecodeSplitKeys fixes decode attention's split size (Options).
	DecodeSplitKeys int64
	// SIMTAttention plans every attention kernel on CUDA cores (Options).
	SIMTAttention bool
	// gemmWGMMA is codegen's answer for its wgmma GEMM (Options).
	gemmWGMMA func(p *plan.Plan, k *plan.Kernel) error
	// gemvTiles is codegen's count of narrow GEMV tiles (Options).
	gemvTiles func(p *plan.Plan, k *plan.Kernel, tn int) (int64, error)
	// gemvCols is codegen's GEMV tile width (Options).
	gemvCols func(p *plan.Plan, k *plan.Kernel) (int, error)
	Log      []Decision
	pass     string
	// kernelOf assigns nodes to kernels during partitioning.
	kernelOf map[*ir.Node]*plan.Kernel
	// apart are the ops (by their first result's reference) kept out of
	// fusion, with why (Options.Check).
	apart map[string]string
}

// dim is d's value at the bound dims (0 where it does not bind).
func (s *State) dim(d ir.Dim) int64 {
	v, _ := d.Eval(s.Dims)
	return v
}

// keptApart reports why n may not join another op's kernel, or "".
func (s *State) keptApart(n *ir.Node) string { return s.apart[n.Outs[0].Ref()] }

func (s *State) explain(fired bool, format string, args ...any) {
	s.Log = append(s.Log, Decision{Pass: s.pass, Fired: fired, Reason: fmt.Sprintf(format, args...)})
}

// Fused is the optimising pipeline.
var Fused = []Pass{
	{Name: "canonicalize", Doc: "CSE, constant folding and normal forms (softmax written out, scales on either matmul operand moved after it, division by a constant, nested transposes)", Run: canonicalize},
	{Name: "attention", Doc: "written attention to a flash node: scale, mask, softcap, GQA, cascade, paged KV, packed queries (varlen)", Run: attention},
	{Name: "sibling", Doc: "matmuls reading one input with param weights become one matmul over the weights joined at load, split", Run: sibling},
	{Name: "fold", Doc: "ops of params and constants only move to the load stage, run once after the weights are loaded", Partial: true, Run: fold},
	{Name: "epilogue", Doc: "matmul kernels absorb their element-wise consumers: bias, activation, residual, SwiGLU, RoPE, KV append", Partial: true, Run: epilogue},
	{Name: "rows", Doc: "element-wise chains and trees over the same rows become one kernel, with row reductions chained while those before are per-row statistics", Partial: true, Run: rows},
	{Name: "kernels", Doc: "every remaining op becomes a kernel of its own; kernels ordered", Run: kernels},
	{Name: "layout", Doc: "a value every reader reads through one permuting view is stored in the order they read it", Bound: true, Run: layout},
	{Name: "memory", Doc: "liveness-based static arena with fixed offsets", Bound: true, Run: memory},
	{Name: "launch", Doc: "grids and blocks; split-KV count from batch × kv-heads × context against the SMs; varlen attention over each sequence's query tiles; split-K of GEMVs and of the wgmma GEMM where their tiles leave SMs idle", Bound: true, Run: launch},
}

// Unfused is the trivial plan: one op per kernel, from the same code, every
// value stored in its own layout, no load stage.
var Unfused = fusedPasses("kernels", "memory", "launch")

// fusedPasses picks passes of Fused by name, in the order given.
func fusedPasses(names ...string) []Pass {
	var out []Pass
	for _, n := range names {
		for _, p := range Fused {
			if p.Name == n {
				out = append(out, p)
			}
		}
	}
	return out
}

// Options control a pipeline run.
type Options struct {
	// Dims binds the symbolic dims; without it the bound passes are skipped.
	Dims map[string]int64
	// Target is the GPU the launch pass sizes grids for; plan.H200 when
	// its SM count is 0.
	Target plan.Target
	// DecodeSplitKeys, when positive, fixes decode attention's split size
	// in keys (deterministic mode: a sequence's result then depends on its
	// own length alone, never on the batch it runs in); 0 lets the launch
	// plan divide each context over the splits that fill the GPU.
	DecodeSplitKeys int64
	// SIMTAttention plans the CUDA-core attention kernels even where the
	// tensor-core ones could run (tests compare both implementations).
	SIMTAttention bool
	// After is called after each pass with its name and state (for dumps).
	After func(pass string, s *State)
	// Check, when set, is the code generator's answer whether it can emit
	// a kernel of a bound plan (codegen/cuda.Emittable). A fused kernel it
	// refuses is undone: the plan is made again with the ops the kernel
	// absorbed kept out of fusion, and --explain says why.
	Check func(p *plan.Plan, k *plan.Kernel) error
	// GemmWGMMA, when set, is the code generator's answer whether its
	// wgmma GEMM takes a gemm kernel of a bound plan
	// (codegen/cuda.GemmWGMMA): the launch pass plans that GEMM's launch
	// only for a kernel it takes, and the mma.sync tiles, with why in
	// --explain, for one it refuses. Unset, it plans the wgmma GEMM for
	// every 16-bit matmul of more than plan.GemvMaxRows rows.
	GemmWGMMA func(p *plan.Plan, k *plan.Kernel) error
	// GemvTiles, when set, is the code generator's count of the column
	// tiles of tn slots a gemm kernel of a bound plan takes on its one-row
	// GEMV path, or why it takes no narrow tiles
	// (codegen/cuda.GemvTiles): the launch pass gives a one-row GEMV that
	// would split K narrower tiles that fill the SMs instead, its grid
	// that count. Unset, such a GEMV splits K.
	GemvTiles func(p *plan.Plan, k *plan.Kernel, tn int) (int64, error)
	// GemvCols, when set, is the code generator's tile width, in column
	// slots, of a gemm kernel's GEMV path (codegen/cuda.GemvCols): the
	// launch pass sizes the grid a block a tile of that width. Unset, it
	// sizes it for plan.GemvCols.
	GemvCols func(p *plan.Plan, k *plan.Kernel) (int, error)
}

// Run clones the graph and runs the passes on the clone. With opt.Check
// and bound dims it runs them again while the code generator refuses a
// fused kernel, each time keeping the refused kernels' absorbed ops (by
// value: the passes are deterministic) out of fusion.
func Run(g *ir.Graph, passes []Pass, opt Options) (*State, error) {
	apart := map[string]string{}
	for {
		s, err := run(g, passes, opt, apart)
		if err != nil || opt.Check == nil || s.Plan == nil || s.Dims == nil {
			return s, err
		}
		more := false
		for _, k := range s.Plan.Kernels {
			if len(k.Nodes) < 2 {
				continue
			}
			cerr := opt.Check(s.Plan, k)
			if cerr == nil {
				continue
			}
			anchor := k.Anchor()
			for _, n := range k.Nodes {
				if ref := n.Outs[0].Ref(); n != anchor && apart[ref] == "" {
					apart[ref] = fmt.Sprintf("codegen refused the kernel it joined: %v", cerr)
					more = true
				}
			}
		}
		if !more {
			return s, nil
		}
	}
}

// run is one run of the passes, with the ops of apart (value reference →
// why) kept out of fusion.
func run(g *ir.Graph, passes []Pass, opt Options, apart map[string]string) (*State, error) {
	if opt.Target.SMs == 0 {
		opt.Target = plan.H200
	}
	if err := opt.Target.Verify(); err != nil {
		return nil, err
	}
	s := &State{Graph: g.Clone(), Dims: opt.Dims, Target: opt.Target, DecodeSplitKeys: opt.DecodeSplitKeys, SIMTAttention: opt.SIMTAttention, gemmWGMMA: opt.GemmWGMMA, gemvTiles: opt.GemvTiles, gemvCols: opt.GemvCols, kernelOf: map[*ir.Node]*plan.Kernel{}, apart: apart}
	for _, p := range passes {
		if p.Bound && s.Dims == nil {
			continue
		}
		s.pass = p.Name
		if _, err := p.Run(s); err != nil {
			return nil, fmt.Errorf("pass %s: %w", p.Name, err)
		}
		if err := s.Graph.Verify(); err != nil {
			return nil, fmt.Errorf("after pass %s: %w", p.Name, err)
		}
		if s.Plan != nil && !p.Partial {
			if err := s.Plan.Verify(); err != nil {
				return nil, fmt.Errorf("after pass %s: %w", p.Name, err)
			}
		}
		if opt.After != nil {
			opt.After(p.Name, s)
		}
	}
	return s, nil
}

// Lookup returns the pass named name from the fused pipeline.
func Lookup(name string) (Pass, bool) {
	for _, p := range Fused {
		if p.Name == name {
			return p, true
		}
	}
	return Pass{}, false
}
