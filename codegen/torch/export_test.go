package torch_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen/torch"
	"github.com/fuser-dev/fuser/diag"
	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/internal/golden"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/specs"
)

// TestGolden exports every shipped spec as `fuser export --torch` does
// and compares the program with testdata/<spec>.py.golden (go test
// ./codegen/torch -run TestGolden -update rewrites them); where python3 is
// on the PATH, each program must compile (py_compile).
func TestGolden(t *testing.T) {
	py, _ := exec.LookPath("python3")
	for _, name := range specs.Names() {
		t.Run(name, func(t *testing.T) {
			file, src, _ := specs.Source(name)
			g, err := frontend.Parse(file, src)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := torch.Export(g, torch.Options{File: file, Source: src})
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name+".py.golden"), prog)
			if py == "" {
				t.Log("no python3: the program is not compiled")
				return
			}
			path := filepath.Join(t.TempDir(), name+".py")
			if err := os.WriteFile(path, []byte(prog), 0o644); err != nil {
				t.Fatal(err)
			}
			if b, err := exec.Command(py, "-m", "py_compile", path).CombinedOutput(); err != nil {
				t.Errorf("py_compile %s: %v\n%s", path, err, b)
			}
		})
	}
}

// TestRefused checks that what the program cannot compute as PyTorch would
// is refused, every op at its position: fp8e4m3 arithmetic (PyTorch's
// float8 tensors only convert and change views), and the attention node
// the passes build, which no spec writes.
func TestRefused(t *testing.T) {
	const fp8 = `layer q8
dim B
input  x : fp8e4m3[B, 8]
param  s : fp8e4m3[8]
output y : bf16[B, 8]
output z : bf16[B, 4]
y = cast(x * s, bf16)
z = cast(reshape(transpose(reshape(x, [B, 4, 2]), [0, 2, 1]), [B, 8]), bf16) @ cast(reshape(s, [8, 1]), bf16) + cast(slice(x, 0, 4, axis=-1), bf16)
`
	g, err := frontend.Parse("q8.fu", fp8)
	if err != nil {
		t.Fatal(err)
	}
	_, err = torch.Export(g, torch.Options{})
	var list diag.List
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("Export = %v, want one positioned error (the mul)", err)
	}
	if got := list.Render(fp8); !strings.Contains(got, "q8.fu:7:12: PyTorch has no fp8e4m3 mul") || !strings.Contains(got, "hint: cast(x, bf16)") {
		t.Errorf("error:\n%s", got)
	}

	file, src, _ := specs.Source("tiny")
	g, err = frontend.Parse(file, src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := passes.Run(g, passes.Fused[:2], passes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = torch.Export(st.Graph, torch.Options{})
	if !errors.As(err, &list) || !strings.Contains(err.Error(), "specs/tiny.fu:") || !strings.Contains(err.Error(), "attention is not an op of the spec language") {
		t.Errorf("Export of the graph after the attention pass = %v, want a positioned error naming attention", err)
	}
}
