// Package specs embeds the layer specs that ship with fuser: the default
// Llama-3-8B layer that `fuser` runs with no arguments, and the model variants
// every test plans, compiles and executes.
package specs

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
)

//go:embed *.fu
var files embed.FS

// Default is the name of the spec `fuser` runs when given none.
const Default = "llama3_8b"

// Names lists the embedded specs, sorted, without the .fu extension.
func Names() []string { return List(files, ".") }

// List lists the spec files (.fu) of directory dir of fsys, sorted, without
// the extension.
func List(fsys fs.FS, dir string) []string {
	entries, _ := fs.ReadDir(fsys, dir)
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".fu"); ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Source returns the text of the embedded spec name and its file name.
func Source(name string) (filename, src string, ok bool) {
	b, err := files.ReadFile(name + ".fu")
	if err != nil {
		return "", "", false
	}
	return "specs/" + name + ".fu", string(b), true
}

// Read returns the text of the embedded spec named spec, else of the file
// spec, and its file name.
func Read(spec string) (filename, src string, err error) {
	if filename, src, ok := Source(spec); ok {
		return filename, src, nil
	}
	b, err := os.ReadFile(spec)
	if err != nil {
		return "", "", fmt.Errorf("no embedded spec %s: %w", spec, err)
	}
	return spec, string(b), nil
}
