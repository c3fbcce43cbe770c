package specgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// dimsPrefix starts the comment line of a spec file that names its dims.
const dimsPrefix = "# dims: "

// Parse reads a spec file's text: the dims are those of its "# dims: B=2,S=3"
// line, the name is the file's base name without ".fu".
func Parse(path, src string) (Spec, error) {
	name := strings.TrimSuffix(filepath.Base(path), ".fu")
	for _, line := range strings.Split(src, "\n") {
		if rest, ok := strings.CutPrefix(line, dimsPrefix); ok {
			dims := map[string]int64{}
			if rest = strings.TrimSpace(rest); rest != "" {
				var err error
				if dims, err = ir.ParseDims(rest); err != nil {
					return Spec{}, fmt.Errorf("%s: %w", path, err)
				}
			}
			return Spec{Name: name, Source: src, Dims: dims}, nil
		}
	}
	return Spec{}, fmt.Errorf("%s: no %q line", path, strings.TrimSpace(dimsPrefix))
}

// ReadDir reads every .fu file of dir, sorted by name.
func ReadDir(dir string) ([]Spec, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.fu"))
	if err != nil {
		return nil, err
	}
	var out []Spec
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		s, err := Parse(p, string(b))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Write writes the specs of seeds first..first+n-1 into dir as NAME.fu.
func Write(dir string, first uint64, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range uint64(n) {
		s := Generate(first + i)
		if err := os.WriteFile(filepath.Join(dir, s.Name+".fu"), []byte(s.Source), 0o644); err != nil {
			return err
		}
	}
	return nil
}
