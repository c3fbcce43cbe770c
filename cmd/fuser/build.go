package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fuser-dev/fuser/codegen/build"
	"github.com/fuser-dev/fuser/codegen/nvrtc"
)

const buildUsage = "build SPEC -dims B=1,S=1,T=4096 -o DIR [--unfused] [-target h200] [-arch ARCH] [-split-keys N]"

// runBuild writes a spec's CUDA kernels, Go launch package and plan.json,
// and the PTX and ptxas report when this binary has NVRTC (-tags nvrtc).
func runBuild(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	dimsArg := fs.String("dims", "", "bind the dims the plan is sized for (the largest batch bucket)")
	out := fs.String("o", "", "output directory")
	unfused := fs.Bool("unfused", false, "build the unfused plan (one op per kernel)")
	targetName := targetFlag(fs)
	arch := fs.String("arch", "", "GPU architecture for NVRTC (default: the target's)")
	splitKeys := fs.Int64("split-keys", 0, "fix decode attention's split size in keys (deterministic mode: a sequence's result does not depend on its batch; 0: the launch plan's split)")
	g, dims, err := specAndDims(fs, args, buildUsage, dimsArg)
	if err != nil {
		return err
	}
	target, err := parseTarget("build", *targetName)
	if err != nil {
		return err
	}
	if *arch == "" {
		*arch = target.Arch
	}
	if *out == "" {
		return &exitError{code: 2, err: fmt.Errorf("usage: fuser %s", buildUsage)}
	}
	if err := requireDims(dims, g); err != nil {
		return err
	}
	if *splitKeys < 0 {
		return &exitError{code: 2, err: fmt.Errorf("fuser build: -split-keys %d is negative", *splitKeys)}
	}
	opt := build.Options{Unfused: *unfused, Target: target, DecodeSplitKeys: *splitKeys}
	compile := build.NVRTC(*arch)
	err = build.Build(g, dims, *out, opt, compile)
	if errors.Is(err, nvrtc.ErrUnavailable) {
		compile = nil
		err = build.Build(g, dims, *out, opt, nil)
	}
	if err != nil {
		return err
	}
	entries, _ := os.ReadDir(*out)
	fmt.Fprintf(w, "built layer %s (%s plan) at %s into %s:\n", g.Name, map[bool]string{true: "unfused", false: "fused"}[*unfused], formatDims(dims), *out)
	for _, e := range entries {
		fmt.Fprintf(w, "  %s\n", filepath.Join(*out, e.Name()))
	}
	if compile == nil {
		fmt.Fprintln(w, "no NVRTC in this binary: kernels.ptx not written (see README: build with -tags nvrtc)")
	} else if log, err := os.ReadFile(filepath.Join(*out, build.LogFile)); err == nil {
		fmt.Fprintf(w, "ptxas (%s):\n%s", *arch, summarizePtxas(string(log)))
	}
	return nil
}

// summarizePtxas prints one line per kernel: registers, shared memory and
// spills.
func summarizePtxas(log string) string {
	infos, err := nvrtc.ParsePtxasInfo(log)
	if err != nil {
		return log
	}
	s := ""
	for _, k := range infos {
		s += fmt.Sprintf("  %-48s %3d registers  %6d B smem  %4d B stack  spills %d/%d\n", k.Name, k.Registers, k.SharedBytes, k.StackBytes, k.SpillStores, k.SpillLoads)
	}
	return s
}
