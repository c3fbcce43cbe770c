package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/fuser-dev/fuser/codegen/torch"
	"github.com/fuser-dev/fuser/diag"
)

const exportUsage = "export --torch SPEC [-dims B=2,S=1,T=17] [-o FILE]"

// runExport writes the spec's layer as written (before any fusion pass) as
// a self-contained PyTorch program (codegen/torch): layer(t, dims, mode)
// in float64 (ref64) or in the spec's dtypes (native), and a main that runs
// it on a safetensors file.
func runExport(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	asTorch := fs.Bool("torch", false, "write a PyTorch program (the only format)")
	dimsArg := fs.String("dims", "", "dims baked in as the program's defaults, e.g. B=2,S=1,T=17")
	out := fs.String("o", "", "write the program to FILE (default: standard output)")
	pos, err := parseArgs(fs, args, 1, exportUsage)
	if err != nil {
		return err
	}
	if !*asTorch {
		return &exitError{code: 2, err: fmt.Errorf("fuser export: name the format (--torch)\nusage: fuser %s", exportUsage)}
	}
	g, filename, src, err := loadSpecSource(pos[0])
	if err != nil {
		return err
	}
	dims, err := parseDims(*dimsArg, g)
	if err != nil {
		return err
	}
	prog, err := torch.Export(g, torch.Options{File: filename, Source: src, Dims: dims})
	var list diag.List
	if errors.As(err, &list) {
		return specErrors(list, src)
	}
	if err != nil {
		return fmt.Errorf("fuser export: %w", err)
	}
	if *out == "" {
		_, err = io.WriteString(w, prog)
		return err
	}
	if err := os.WriteFile(*out, []byte(prog), 0o644); err != nil {
		return fmt.Errorf("fuser export: %w", err)
	}
	fmt.Fprintf(w, "wrote layer %s of %s as a PyTorch program to %s\n", g.Name, filename, *out)
	return nil
}
