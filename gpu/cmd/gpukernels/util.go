package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/fuser-dev/fuser/codegen/nvrtc"
	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/gpu"
	"github.com/fuser-dev/fuser/ir"
)

func parse(file, src string) (*ir.Graph, error) { return frontend.Parse(file, src) }

func cutSuffix(s, suf string) (string, bool) { return strings.CutSuffix(s, suf) }

// previous is the manifest an earlier run left in dir, so that the images
// it compiled are not compiled again.
func previous(dir string) map[string][]nvrtc.KernelInfo {
	var m gpu.Manifest
	if b, err := os.ReadFile(filepath.Join(dir, gpu.ManifestFile)); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m.Images
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
