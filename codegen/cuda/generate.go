package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// Module is one self-contained CUDA translation unit holding every kernel
// of a plan.
type Module struct {
	// Source is the CUDA C++ source; it includes no header.
	Source string
	// Kernels follow the plan's order.
	Kernels []Kernel
}

// Kernel describes the entries generated for one plan kernel.
type Kernel struct {
	// Name is the plan kernel's name and an extern "C" entry, the first
	// launched but after a cascade's prefix pass.
	Name string
	// Entries are the extern "C" entries to launch, in order, for the
	// plan's launch variant: Name alone, Name then a second entry (the
	// log-sum-exp merge of split-KV decode attention, or the reduction and
	// epilogue of a split-K GEMV), or, for cascade decode attention, the
	// prefix pass (Name + "_prefix") then Name.
	Entries []string
	// Variants lists the entries of every variant the kernel was generated
	// for ("row", "gemm", "decode", "prefill", ...), so a launcher may switch
	// variant when the dims change.
	Variants map[string][]string
	// Params are the parameters of every entry, in order: the codegen ABI
	// (input pointers, output pointers, int64 dims); the plan lists the
	// page-table inputs of a paged or ragged cache among the inputs.
	Params []codegen.Param
	// Block is the number of threads per block every entry is written for.
	Block int
	// Hash is a content hash of the kernel's body: kernels with equal hashes
	// share one body in Source.
	Hash string
}

// entry is one generated body function and its extern "C" entry.
type entry struct {
	suffix string
	body   string
}

// generated is what a strategy's generator returns.
type generated struct {
	// helpers are device functions the entries call, emitted before them.
	helpers string
	entries []entry
	// variants maps a variant to the entry suffixes launched for it.
	variants map[string][]string
	variant  string
}

// Generate emits one self-contained CUDA translation unit for the plan.
// Sizes come from the graph's dims at run time (the int64 dim parameters);
// constants of the graph are baked in. Identical kernel bodies are emitted
// once.
func Generate(p *plan.Plan, opts ...Option) (*Module, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var src strings.Builder
	src.WriteString(prelude)
	src.WriteString(preludeRow)
	src.WriteString(preludeAttention)
	m := &Module{}
	emitted := map[string]bool{}
	tables := map[string]bool{}
	var wsFloats int64
	var entries strings.Builder
	for _, pk := range p.Kernels {
		k, gen, err := generateKernel(p.Graph, pk, o)
		if err != nil {
			return nil, err
		}
		var bodies strings.Builder
		bodies.WriteString(gen.helpers)
		for _, e := range gen.entries {
			fmt.Fprintf(&bodies, "FZ_DEV void @BODY@%s(%s) {\n%s}\n", e.suffix, k.signature(false), e.body)
		}
		sum := sha256.Sum256([]byte(fmt.Sprintf("block=%d\n%s", k.nt, bodies.String())))
		hash := hex.EncodeToString(sum[:8])
		for _, name := range sortedKeys(k.tables) {
			if !tables[name] {
				tables[name] = true
				src.WriteString(k.tables[name])
			}
		}
		if !emitted[hash] {
			emitted[hash] = true
			fmt.Fprintf(&src, "\n// body of %s\n", pk.Name)
			src.WriteString(strings.ReplaceAll(bodies.String(), "@BODY@", "fzb_"+hash))
		}
		for _, e := range gen.entries {
			fmt.Fprintf(&entries, "extern \"C\" __global__ void __launch_bounds__(%d, 1) %s%s(%s) { fzb_%s%s(%s); }\n",
				k.nt, pk.Name, e.suffix, k.signature(true), hash, e.suffix, k.args())
		}
		kern := Kernel{Name: pk.Name, Params: k.apiParams(), Block: k.nt, Hash: hash, Variants: map[string][]string{}}
		wsFloats = max(wsFloats, k.wsFloats)
		for v, sufs := range gen.variants {
			for _, s := range sufs {
				kern.Variants[v] = append(kern.Variants[v], pk.Name+s)
			}
		}
		kern.Entries = kern.Variants[gen.variant]
		m.Kernels = append(m.Kernels, kern)
	}
	src.WriteString("\n// entries\n")
	ws := fmt.Sprintf("// Scratch of split-K and split-KV partials, sized for the plan's launch.\nstatic __device__ float fz_workspace[%d];\n", max(wsFloats, 1))
	s := src.String()
	i := strings.Index(s, "\n// body of ")
	if i < 0 {
		i = len(s)
	}
	src.Reset()
	src.WriteString(s[:i] + "\n" + ws + s[i:])
	src.WriteString(entries.String())
	m.Source = src.String()
	return m, nil
}

// Option changes how Generate writes a module.
type Option func(*options)

type options struct {
	simtAttention bool
}

// SIMTAttention makes Generate write every attention kernel with the
// CUDA-core kernels, also where the tensor-core flash kernels apply, so
// that both implementations can be compared on the same plans.
func SIMTAttention() Option { return func(o *options) { o.simtAttention = true } }

// generateKernel dispatches on the kernel's strategy.
func generateKernel(g *ir.Graph, pk *plan.Kernel, o options) (*kgen, *generated, error) {
	variant := ""
	if pk.Launch != nil {
		variant = pk.Launch.Variant
	}
	nt := 256
	if pk.Launch != nil && pk.Launch.Block > 0 {
		nt = pk.Launch.Block
	} else if pk.Strategy == plan.Attention {
		nt = 128
	}
	k, err := newKgen(g, pk, nt)
	if err != nil {
		return nil, nil, err
	}
	one := func(v, body string) *generated {
		return &generated{entries: []entry{{"", body}}, variants: map[string][]string{v: {""}}, variant: v}
	}
	var gen *generated
	switch pk.Strategy {
	case plan.Row, plan.Copy:
		body, err := k.elementwiseKernel()
		if err != nil {
			return nil, nil, err
		}
		gen = one(pk.Strategy.String(), body)
	case plan.Reduce:
		body, err := k.reduceKernel()
		if err != nil {
			return nil, nil, err
		}
		gen = one("reduce", body)
	case plan.Gemm:
		if gen, err = k.gemmKernel(); err != nil {
			return nil, nil, err
		}
	case plan.Attention:
		// Tensor-core kernels for 16-bit operands with contiguous head dims;
		// the CUDA-core kernels take every other case.
		if o.simtAttention {
			err = fmt.Errorf("CUDA-core attention forced")
		} else {
			gen, err = k.flashAttentionKernel()
		}
		if err != nil {
			if gen, err = k.attentionKernel(); err != nil {
				return nil, nil, err
			}
		}
	case plan.Append:
		body, err := k.appendKernel()
		if err != nil {
			return nil, nil, err
		}
		gen = one("append", body)
	default:
		return nil, nil, fmt.Errorf("kernel %s: strategy %s is not supported yet", pk.Name, pk.Strategy)
	}
	if variant == "" || gen.variants[variant] == nil {
		variant = gen.variant
	}
	gen.variant = variant
	return k, gen, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
