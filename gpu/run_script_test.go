package gpu

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// argsStub stands in for a program of run.sh: it prints its name and
// arguments.
const argsStub = `#!/usr/bin/env bash
echo "$(basename "$0") $*"
`

// TestRunScriptPrefill runs run.sh with every step but runtime's,
// refcheck's and compare's left out, over stand-ins for runtime.test,
// refcheck.sh and python3: compare.py gets --prefill with PREFILL's token
// counts, and no --prefill when PREFILL is unset or empty; refcheck.sh
// runs into the results' refcheck/.
func TestRunScriptPrefill(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	gpu, bin := filepath.Join(dir, ".gpu"), filepath.Join(dir, "bin")
	for _, d := range []string{gpu, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.ReadFile("run.sh")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		filepath.Join(gpu, "run.sh"):       string(src),
		filepath.Join(gpu, "bench.env"):    "BENCH_SPEC=llama3_8b\nBENCH_DIMS=\"B=1,S=4096,T=0\"\n",
		filepath.Join(gpu, "runtime.test"): argsStub,
		filepath.Join(gpu, "refcheck.sh"):  argsStub,
		filepath.Join(gpu, "compare.py"):   "",
		filepath.Join(bin, "python3"):      argsStub,
	} {
		if err := os.WriteFile(name, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	compare := "python3 " + filepath.Join(gpu, "compare.py") + " --ours "
	for _, tc := range []struct {
		name, env, out, want string
	}{
		{"PREFILL unset", "", "unset", ""},
		{"PREFILL empty", "PREFILL=", "empty", ""},
		{"PREFILL=4096,512", "PREFILL=4096,512", "set", " --prefill 4096,512"},
	} {
		out := filepath.Join(dir, tc.out)
		cmd := exec.Command("bash", filepath.Join(gpu, "run.sh"), out)
		cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "PREFILL=") || strings.HasPrefix(e, "SKIP_") })
		cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"SKIP_LADDER=1", "SKIP_SUITE=1", "SKIP_SANITIZER=1", "SKIP_BENCH=1", "SKIP_NCU=1")
		if tc.env != "" {
			cmd.Env = append(cmd.Env, tc.env)
		}
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: run.sh: %v\n%s", tc.name, err, b)
		}
		log, err := os.ReadFile(filepath.Join(out, "compare.log"))
		if err != nil {
			t.Fatal(err)
		}
		want := "--out " + out + tc.want + "\n"
		if !strings.HasPrefix(string(log), compare) || !strings.HasSuffix(string(log), want) {
			t.Errorf("%s: compare.py ran as %q, want it to end %q", tc.name, log, want)
		}
		ref, err := os.ReadFile(filepath.Join(out, "refcheck.log"))
		if want := "refcheck.sh " + filepath.Join(out, "refcheck") + "\n"; err != nil || string(ref) != want {
			t.Errorf("%s: refcheck.sh ran as %q (%v), want %q", tc.name, ref, err, want)
		}
	}
}
