// Package build turns a layer into the files the runtime and the benchmarks
// use: the CUDA source of its kernels, the Go package that launches them,
// plan.json and, given a compiler, the PTX. `fuser build` calls Build.
package build

import (
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/fuser-dev/fuser/codegen/cuda"
	"github.com/fuser-dev/fuser/codegen/golang"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// The files Build writes, besides the Go package (<package>.go).
const (
	SourceFile = "kernels.cu"
	PTXFile    = "kernels.ptx"
	LogFile    = "kernels.log"
	PlanFile   = "plan.json"
)

// Compiler compiles the CUDA source to PTX; info is its log (with
// --ptxas-options=--verbose, the per-kernel ptxas report).
type Compiler func(src string) (ptx []byte, info string, err error)

// Options choose the plan Build generates.
type Options struct {
	// Unfused plans one op per kernel instead of the fused pipeline.
	Unfused bool
	// Target is the GPU the plan is sized for (passes.Options.Target).
	Target plan.Target
	// DecodeSplitKeys, when positive, fixes decode attention's split size
	// in keys: deterministic mode (passes.Options.DecodeSplitKeys).
	DecodeSplitKeys int64
}

// Build plans g at dims (the fused pipeline, or one op per kernel with
// opt.Unfused) and writes into outDir, creating it: kernels.cu, the Go package
// named after the layer (<package>.go, see PackageName), plan.json and,
// when compile is not nil, kernels.ptx and kernels.log. Everything is
// generated before the first file is written.
func Build(g *ir.Graph, dims map[string]int64, outDir string, opt Options, compile func(src string) (ptx []byte, info string, err error)) error {
	return build(g, dims, outDir, opt, compile, cudaKernels)
}

// generator generates the CUDA source of a plan bound to dims and
// describes its kernels for the launch code.
type generator func(p *plan.Plan, dims map[string]int64) (src string, kernels []golang.Kernel, err error)

// build is Build with the CUDA generator as a parameter.
func build(g *ir.Graph, dims map[string]int64, outDir string, opt Options, compile Compiler, gen generator) error {
	files, err := generate(g, dims, opt, compile, gen)
	if err != nil {
		return fmt.Errorf("build %s: %w", g.Name, err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("build %s: %w", g.Name, err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(outDir, f.name), f.data, 0o644); err != nil {
			return fmt.Errorf("build %s: %w", g.Name, err)
		}
	}
	return nil
}

type file struct {
	name string
	data []byte
}

// generate produces the files of Build in memory.
func generate(g *ir.Graph, dims map[string]int64, opt Options, compile Compiler, gen generator) ([]file, error) {
	for _, d := range g.Dims {
		if _, ok := dims[d]; !ok {
			return nil, fmt.Errorf("dim %s is not bound", d)
		}
	}
	pipeline := passes.Fused
	if opt.Unfused {
		pipeline = passes.Unfused
	}
	st, err := passes.Run(g, pipeline, passes.Options{Dims: dims, Target: opt.Target, DecodeSplitKeys: opt.DecodeSplitKeys, Check: cuda.Emittable, GemmWGMMA: cuda.GemmWGMMA, GemvTiles: cuda.GemvTiles, GemvCols: cuda.GemvCols})
	if err != nil {
		return nil, err
	}
	p := st.Plan
	src, kernels, err := gen(p, dims)
	if err != nil {
		return nil, err
	}
	pkg := PackageName(g.Name)
	goSrc, err := golang.Generate(p, dims, kernels, pkg, PTXFile)
	if err != nil {
		return nil, err
	}
	files := []file{{SourceFile, []byte(src)}, {pkg + ".go", []byte(goSrc)}}
	var info string
	if compile != nil {
		ptx, log, err := compile(src)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", SourceFile, err)
		}
		info = log
		files = append(files, file{PTXFile, ptx}, file{LogFile, []byte(log)})
	}
	doc, err := planJSON(p, dims, !opt.Unfused, kernels, info)
	if err != nil {
		return nil, err
	}
	return append(files, file{PlanFile, doc}), nil
}

// PackageName is the Go package name of a layer: its name in lower case,
// with characters other than letters, digits and underscores dropped, and
// "layer" in front when that leaves no letter first, a keyword or main.
func PackageName(layer string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r == '_' || unicode.IsDigit(r):
			return r
		case unicode.IsLetter(r):
			return unicode.ToLower(r)
		}
		return -1
	}, layer)
	if s == "" || !unicode.IsLetter([]rune(s)[0]) || token.IsKeyword(s) || s == "main" {
		s = "layer" + s
	}
	return s
}
