package gpu

import (
	"path/filepath"

	"github.com/fuser-dev/fuser/internal/specgen"
)

// SpecCases are the cases of the spec files of dir, in the form
// internal/specgen writes them (cmd/specgen -out DIR): one case per file,
// at the dims of its "# dims:" line, its inputs drawn from seed plus its
// index. The suite runs them with -specs DIR, and gpukernels -specs DIR
// compiles their kernels.
func SpecCases(dir string, seed int64) ([]Case, error) {
	specs, err := specgen.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Case, len(specs))
	for i, s := range specs {
		out[i] = Case{Spec: s.Name, File: filepath.Join(dir, s.Name+".fu"), Dims: s.Dims, Seed: seed + int64(i), What: "spec file"}
	}
	return out, nil
}
