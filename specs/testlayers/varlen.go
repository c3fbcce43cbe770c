package testlayers

import (
	"embed"
	"fmt"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/specs"
)

// varlenFiles are the layers over packed prompts of different lengths
// (packed variable-length queries, LANGUAGE.md), which no shipped spec
// has: the passes' plan goldens, the interpreter's plan tests and the
// on-device suite share them.
//
//go:embed varlen/*.fu
var varlenFiles embed.FS

// VarlenNames lists the varlen layers, sorted.
func VarlenNames() []string { return specs.List(varlenFiles, "varlen") }

// Varlen builds the varlen layer name, its file named as in the
// repository (specs/testlayers/varlen/NAME.fu).
func Varlen(name string) (*ir.Graph, error) {
	src, err := varlenFiles.ReadFile("varlen/" + name + ".fu")
	if err != nil {
		return nil, fmt.Errorf("no varlen layer %s: %w", name, err)
	}
	return frontend.Parse("specs/testlayers/varlen/"+name+".fu", string(src))
}
