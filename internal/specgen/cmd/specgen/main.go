// Command specgen writes generated specs (internal/specgen) to a directory,
// one NAME.fu per seed, each naming its dims on a "# dims:" line, and checks
// each on the CPU unless -check=false:
//
//	go run ./internal/specgen/cmd/specgen -out DIR [-n 32] [-seed 0]
//
// The GPU suite runs such a directory: gpu.test -specs DIR, with the kernels
// compiled by gpukernels -specs DIR.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/fuser-dev/fuser/internal/specgen"
)

func main() {
	out := flag.String("out", "", "directory to write the specs to")
	n := flag.Int("n", 32, "how many specs")
	seed := flag.Uint64("seed", 0, "the first spec's seed; the others follow")
	check := flag.Bool("check", true, "check each spec on the CPU (specgen.Check) and fail on a finding")
	flag.Parse()
	if *out == "" || *n <= 0 {
		fmt.Fprintln(os.Stderr, "usage: specgen -out DIR [-n 32] [-seed 0] [-check=false]")
		os.Exit(2)
	}
	if err := run(*out, *seed, *n, *check); err != nil {
		fmt.Fprintln(os.Stderr, "specgen:", err)
		os.Exit(1)
	}
	fmt.Printf("specgen: %d specs in %s (seeds %d..%d)\n", *n, *out, *seed, *seed+uint64(*n)-1)
}

func run(dir string, seed uint64, n int, check bool) error {
	if err := specgen.Write(dir, seed, n); err != nil {
		return err
	}
	if !check {
		return nil
	}
	for i := range uint64(n) {
		s := specgen.Generate(seed + i)
		if err := specgen.Check(s); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return nil
}
