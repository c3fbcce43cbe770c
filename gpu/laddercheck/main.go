//go:build cuda

package laddercheck

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/fuser-dev/fuser/gpu"
	"github.com/fuser-dev/fuser/runtime"
)

// Main is the generated program's main: pkgs are the generated packages of
// Targets, in order. It checks each, prints a verdict a target, writes the
// results with -json-out and exits non-zero when a check failed.
func Main(pkgs []Package) {
	seed := flag.Uint64("seed", gpu.DefaultSeed, "seed of the params, states and steps")
	jsonOut := flag.String("json-out", "", "write the results as JSON to this file")
	flag.Parse()
	results, err := checkAll(pkgs, *seed)
	if *jsonOut != "" && results != nil {
		err = errors.Join(err, WriteResults(*jsonOut, results))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "laddercheck:", err)
		os.Exit(1)
	}
}

// checkAll checks every target on device 0 with its package; it fails when
// a check failed.
func checkAll(pkgs []Package, seed uint64) ([]*Result, error) {
	targets, err := Targets()
	if err != nil {
		return nil, err
	}
	if len(pkgs) != len(targets) {
		return nil, fmt.Errorf("%d packages for %d targets: generate the program again (gpu/cmd/laddercheck)", len(pkgs), len(targets))
	}
	ctx, err := runtime.NewContext(0)
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	info, err := ctx.Info()
	if err != nil {
		return nil, err
	}
	fmt.Printf("%s: the CUDA-graph ladder through the generated packages\n", info.Name)
	var results []*Result
	failed := 0
	for i, t := range targets {
		r := Check(ctx, pkgs[i], t, seed, os.Stdout)
		fmt.Println(r.Verdict())
		if r.Failed() {
			failed++
		}
		results = append(results, r)
	}
	if failed > 0 {
		return results, fmt.Errorf("%d of %d targets failed", failed, len(targets))
	}
	return results, nil
}
