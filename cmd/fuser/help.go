package main

import (
	"fmt"
	"io"

	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/specs"
)

func runHelp(_ []string, w io.Writer) error {
	fmt.Fprintln(w, "fuser compiles transformer-layer specs into fused kernels.")
	fmt.Fprintln(w, "\nusage:")
	fmt.Fprintln(w, "  fuser                 check, evaluate and plan the embedded default spec")
	for _, c := range commands() {
		fmt.Fprintf(w, "  fuser %s\n      %s\n", c.usage, c.doc)
	}
	fmt.Fprintln(w, "\nSPEC is a file or an embedded spec:")
	for _, n := range specs.Names() {
		fmt.Fprintf(w, "  %s\n", n)
	}
	fmt.Fprintln(w, "\npasses (fuser plan --dump-after=NAME):")
	for _, p := range passes.Fused {
		fmt.Fprintf(w, "  %-13s %s\n", p.Name, p.Doc)
	}
	fmt.Fprintln(w, "\nspec errors exit with status 2; the language is described in LANGUAGE.md")
	return nil
}
