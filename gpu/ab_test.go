package gpu

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestABScript runs ab.sh over a bundle of stand-ins (shell scripts that
// print what they were asked for) and checks that every step ran with its
// arguments, that the summary records each, and that everything came
// back in the one archive.
func TestABScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	gpu := filepath.Join(dir, ".gpu")
	for _, d := range []string{gpu, filepath.Join(gpu, "base")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.ReadFile("ab.sh")
	if err != nil {
		t.Fatal(err)
	}
	// A stand-in prints its name and arguments, and a step line as fuser
	// bench does.
	stub := "#!/usr/bin/env bash\necho \"$(basename \"$(dirname \"$0\")\")/$(basename \"$0\") $*\"\necho '  step: eager 1 µs, graph replay 1 µs'\n"
	files := map[string]string{
		"ab.sh":         string(src),
		"bench.env":     "BENCH_SPEC=llama3_8b\nBENCH_DIMS=\"B=1,S=1,T=4096 B=16,S=1,T=4096\"\n",
		"fuser":         stub,
		"gpu.test":      stub,
		"base/fuser":    stub,
		"base/REVISION": "0123abcd\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(gpu, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command("bash", filepath.Join(gpu, "ab.sh"), out)
	// compute-sanitizer is not here: the sanitizers stay out
	// (AB_SAN_CASES unset).
	cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "AB_") })
	cmd.Env = append(cmd.Env, "AB_CASES=^mat_", "AB_ROUNDS=2")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ab.sh: %v\n%s", err, b)
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"base 0123abcd", "bench_base.1: exit 0", "bench_new.1: exit 0", "bench_base.2: exit 0", "bench_new.2: exit 0", "timeline: exit 0", "suite: exit 0"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	got := archive(t, filepath.Join(out, "ab.tgz"))
	for name, want := range map[string]string{
		"ab/bench_base.1.txt": "base/fuser bench llama3_8b -dims B=1,S=1,T=4096 -dims B=16,S=1,T=4096 -kernels " + filepath.Join(gpu, "base", "kernels"),
		"ab/bench_new.2.txt":  ".gpu/fuser bench llama3_8b -dims B=1,S=1,T=4096 -dims B=16,S=1,T=4096 -kernels " + filepath.Join(gpu, "kernels"),
		"ab/timeline.txt":     "-unfused=false -timeline",
		"ab/suite.log":        "-cases ^mat_",
		"ab/summary.txt":      "timeline: exit 0",
	} {
		if !strings.Contains(got[name], want) {
			t.Errorf("archive's %s lacks %q: %q", name, want, got[name])
		}
	}
}

// archive reads a gzipped tar into a map of file name to contents.
func archive(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r := tar.NewReader(z)
	files := map[string]string{}
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = string(b)
	}
}
