// Command fuser compiles transformer-layer specs: it checks them, runs them
// on the CPU reference interpreter, and plans them into fused kernels with
// their HBM traffic against the unfused program.
//
//	fuser                     check, evaluate and plan the embedded Llama-3-8B layer
//	fuser check SPEC          report every error of a spec
//	fuser eval SPEC -dims B=2,S=3,T=17 [-seed N]
//	fuser plan SPEC [-dims ...] [--traffic] [--explain] [--dump-after=PASS] [--unfused]
//	fuser build SPEC -dims ... -o DIR [--unfused]
//	fuser export --torch SPEC [-dims ...] [-o FILE]
//	fuser help
//
// SPEC is a file or the name of an embedded spec (fuser help lists them).
// Every command that prints results takes --json. Spec errors exit with
// status 2, other failures with 1.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// exitError carries an exit status; spec errors use 2.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// command is one subcommand.
type command struct {
	name, usage, doc string
	run              func(args []string, stdout io.Writer) error
}

// registered are the commands other files add before help (bench:
// bench.go with the cuda build tag, bench_stub.go without).
var registered []command

func commands() []command {
	cmds := []command{
		{"check", "check SPEC [--json]", "parse and type-check a spec; print every error", runCheck},
		{"eval", "eval SPEC -dims B=2,S=3,T=17 [-seed N] [--round] [--json]", "run the spec on the CPU reference interpreter with random inputs", runEval},
		{"plan", planUsage, "plan the spec into kernels; with dims, launch shapes, arena and traffic", runPlan},
		{"build", buildUsage, "write the plan's CUDA kernels, Go launch package and plan.json (and PTX with NVRTC)", runBuild},
		{"export", exportUsage, "write the layer as written as a PyTorch program: float64 (ref64) and the spec's dtypes (native), run on a safetensors file", runExport},
	}
	cmds = append(cmds, registered...)
	return append(cmds, command{"help", "help", "this text, the passes and the embedded specs", runHelp})
}

func main() {
	err := run(os.Args[1:], os.Stdout)
	if err == nil {
		return
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(code)
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return runDefault(stdout)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout)
		}
	}
	if args[0] == "-h" || args[0] == "--help" {
		return runHelp(nil, stdout)
	}
	return &exitError{code: 2, err: fmt.Errorf("fuser: unknown command %q (try fuser help)", args[0])}
}
