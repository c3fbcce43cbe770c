package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/fuser-dev/fuser/codegen"
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
	// log-sum-exp merge of the CUDA-core split-KV decode attention), or,
	// for cascade decode attention, the
	// prefix pass (Name + "_prefix") then Name.
	Entries []string
	// Variants lists the entries of every variant the kernel was generated
	// for, so a launcher may switch variant when the dims change.
	Variants map[plan.Variant][]string
	// Params are the parameters of every entry, in order: the codegen ABI
	// (input pointers, output pointers, int64 dims, then the decode
	// attention's tensor map, codegen.RowMap). The page-table inputs a
	// paged or ragged cache needs are added to the inputs when the plan did
	// not list them.
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
	// libs are the device libraries (device.go) the helpers and entries
	// use, emitted before them.
	libs []string
	// helpers are device functions the entries call, emitted before them.
	helpers string
	entries []entry
	// variants maps a variant to the entry suffixes launched for it.
	variants map[plan.Variant][]string
	variant  plan.Variant
	// waits: the entries' bodies call fz_grid_sync themselves, after work
	// that touches no memory the step writes; otherwise the entry calls it
	// first.
	waits bool
}

// Options change what Generate emits around the kernels.
type Options struct {
	// Timeline defines FZ_TIMELINE and brackets every entry with the
	// timeline probes of device/prelude.cuh (fz_timeline: when the
	// kernel's blocks enter, pass fz_grid_sync and return), for fuser
	// bench -timeline. The kernels compute the same.
	Timeline bool
}

// Generate emits one self-contained CUDA translation unit for the plan.
// Sizes come from the graph's dims at run time (the int64 dim parameters);
// constants of the graph are baked in. Identical kernel bodies are emitted
// once. The workspace of split-KV partials is the largest any attention
// kernel's launch asks for (plan.Launch.WorkspaceFloats); a split-K GEMV
// declares its own.
func Generate(p *plan.Plan) (*Module, error) { return GenerateWith(p, Options{}) }

// GenerateWith is Generate with options.
func GenerateWith(p *plan.Plan, opt Options) (*Module, error) {
	var src strings.Builder
	src.WriteString(moduleHeader)
	enter, exit := "", ""
	if opt.Timeline {
		src.WriteString("#define FZ_TIMELINE\n")
		enter, exit = " fz_tl_enter();", " fz_tl_exit();"
	}
	type kernelGen struct {
		k   *kgen
		gen *generated
	}
	var gens []kernelGen
	var libs []string
	for _, pk := range p.Kernels {
		k, gen, err := generateKernel(p, pk)
		if err != nil {
			return nil, err
		}
		gens = append(gens, kernelGen{k, gen})
		libs = append(libs, gen.libs...)
	}
	// Every library a kernel asks for, at the start, in the listed order.
	if err := writeLibraries(&src, libs, map[string]bool{}); err != nil {
		return nil, err
	}
	m := &Module{}
	emitted := map[string]bool{}
	tables := map[string]bool{}
	ws := fmt.Sprintf("\n// Scratch of split-KV partials, sized for the plan's launch.\nstatic __device__ float fz_workspace[%d];\n", max(workspaceFloats(p), 1))
	var entries strings.Builder
	for i, pk := range p.Kernels {
		k, gen := gens[i].k, gens[i].gen
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
			if len(emitted) == 0 {
				src.WriteString(ws)
			}
			emitted[hash] = true
			fmt.Fprintf(&src, "\n// body of %s\n", pk.Name)
			src.WriteString(strings.ReplaceAll(bodies.String(), "@BODY@", "fzb_"+hash))
		}
		for _, e := range gen.entries {
			wait := " fz_grid_sync();"
			if gen.waits {
				wait = ""
			}
			fmt.Fprintf(&entries, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s%s(%s) {%s%s fzb_%s%s(%s);%s }\n",
				k.nt, max(k.minBlocks, 1), pk.Name, e.suffix, k.signature(true), enter, wait, hash, e.suffix, k.args(), exit)
		}
		kern := Kernel{Name: pk.Name, Params: k.apiParams(), Block: k.nt, Hash: hash, Variants: map[plan.Variant][]string{}}
		for v, sufs := range gen.variants {
			for _, s := range sufs {
				kern.Variants[v] = append(kern.Variants[v], pk.Name+s)
			}
		}
		kern.Entries = kern.Variants[gen.variant]
		m.Kernels = append(m.Kernels, kern)
	}
	src.WriteString("\n// entries\n")
	if len(emitted) == 0 {
		src.WriteString(ws)
	}
	src.WriteString(entries.String())
	m.Source = src.String()
	return m, nil
}

// workspaceFloats is the largest workspace of the plan's launches but the
// GEMVs', which their bodies declare.
func workspaceFloats(p *plan.Plan) int64 {
	var n int64
	for _, k := range p.Kernels {
		if k.Launch != nil && k.Launch.Variant != plan.VariantGemv {
			n = max(n, k.Launch.WorkspaceFloats)
		}
	}
	return n
}

// Emittable reports whether Generate can emit kernel pk of plan p: nil, or
// the error its generator gives. The passes ask it (passes.Options.Check)
// so that a fusion codegen cannot emit is undone before the plan is made.
func Emittable(p *plan.Plan, pk *plan.Kernel) error {
	_, _, err := generateKernel(p, pk)
	return err
}

// generateKernel dispatches on the kernel's strategy.
func generateKernel(p *plan.Plan, pk *plan.Kernel) (*kgen, *generated, error) {
	nt := 256
	if pk.Launch != nil && pk.Launch.Block > 0 {
		nt = pk.Launch.Block
	} else if pk.Strategy == plan.Attention {
		nt = 128
	}
	k, err := newKgen(p, pk, nt)
	if err != nil {
		return nil, nil, err
	}
	one := func(body string) (*generated, error) {
		v, err := plan.StrategyVariant(pk.Strategy)
		return &generated{entries: []entry{{"", body}}, variants: map[plan.Variant][]string{v: {""}}, variant: v}, err
	}
	var gen *generated
	switch pk.Strategy {
	case plan.Row, plan.Copy:
		body, err := k.elementwiseKernel()
		if err != nil {
			return nil, nil, err
		}
		if gen, err = one(body); err != nil {
			return nil, nil, err
		}
	case plan.Reduce:
		body, err := k.reduceKernel()
		if err != nil {
			return nil, nil, err
		}
		if gen, err = one(body); err != nil {
			return nil, nil, err
		}
	case plan.Gemm:
		if gen, err = k.gemmKernel(); err != nil {
			return nil, nil, err
		}
	case plan.Attention:
		// The launch pass chose the tensor-core or the CUDA-core kernels
		// (codegen.FlashAttention); without a launch, the same rule.
		simt := pk.Launch != nil && pk.Launch.Variant.SIMT()
		if pk.Launch == nil && len(pk.Nodes) == 1 {
			simt = codegen.FlashAttention(pk.Nodes[0]) != nil
		}
		if simt {
			gen, err = k.attentionKernel()
		} else {
			gen, err = k.flashAttentionKernel()
		}
		if err != nil {
			return nil, nil, err
		}
	case plan.Append:
		body, err := k.appendKernel()
		if err != nil {
			return nil, nil, err
		}
		if gen, err = one(body); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, fmt.Errorf("kernel %s: strategy %s is not supported yet", pk.Name, pk.Strategy)
	}
	if l := pk.Launch; l != nil && gen.variants[l.Variant] != nil {
		gen.variant = l.Variant
	}
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
