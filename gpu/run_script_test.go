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

// scriptDir writes run.sh into DIR/.gpu beside files (relative to DIR),
// and returns DIR.
func scriptDir(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	src, err := os.ReadFile("run.sh")
	if err != nil {
		t.Fatal(err)
	}
	files[".gpu/run.sh"] = string(src)
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runScript runs DIR/.gpu/run.sh out with DIR/bin first in PATH, env
// added to an environment without PREFILL and the SKIP_ variables, and
// returns its output and error.
func runScript(dir, out string, env ...string) ([]byte, error) {
	cmd := exec.Command("bash", filepath.Join(dir, ".gpu", "run.sh"), out)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "PREFILL=") || strings.HasPrefix(e, "SKIP_") })
	cmd.Env = append(cmd.Env, "PATH="+filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	return cmd.CombinedOutput()
}

// TestRunScriptPrefill runs run.sh with every step but runtime's,
// refcheck's and compare's left out, over stand-ins for runtime.test,
// refcheck.sh and python3: compare.py gets --prefill with PREFILL's token
// counts, and no --prefill when PREFILL is unset or empty; refcheck.sh
// runs into the results' refcheck/.
func TestRunScriptPrefill(t *testing.T) {
	dir := scriptDir(t, map[string]string{
		".gpu/bench.env":    "BENCH_SPEC=llama3_8b\nBENCH_DIMS=\"B=1,S=4096,T=0\"\n",
		".gpu/runtime.test": argsStub,
		".gpu/refcheck.sh":  argsStub,
		".gpu/compare.py":   "",
		"bin/python3":       argsStub,
	})
	compare := "python3 " + filepath.Join(dir, ".gpu", "compare.py") + " --ours "
	for _, tc := range []struct {
		name, env, out, want string
	}{
		{"PREFILL unset", "", "unset", ""},
		{"PREFILL empty", "PREFILL=", "empty", ""},
		{"PREFILL=4096,512", "PREFILL=4096,512", "set", " --prefill 4096,512"},
	} {
		out := filepath.Join(dir, tc.out)
		env := []string{"SKIP_LADDER=1", "SKIP_SUITE=1", "SKIP_SANITIZER=1", "SKIP_BENCH=1", "SKIP_NCU=1"}
		if tc.env != "" {
			env = append(env, tc.env)
		}
		if b, err := runScript(dir, out, env...); err != nil {
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

// ladderStub stands in for .gpu/laddercheck: it prints its arguments and
// a verdict a target, the second failing when LADDER_FAIL is set, and
// then exits 1 as the program does.
const ladderStub = `#!/usr/bin/env bash
echo "laddercheck $*"
echo "  ok batch=1 (lengths [4097]): bucket 1, 1 launch (1 graph)"
echo "ok llama3_8b B=1 S=1 T=4096: 1 graph steps of 1 launch each"
if [ -n "${LADDER_FAIL:-}" ]; then
	echo "FAIL paged_decode B=8 S=1 T=64 P=40 N=48: 1 failures"
	echo "laddercheck: 1 of 2 targets failed" >&2
	exit 1
fi
echo "ok paged_decode B=8 S=1 T=64 P=40 N=48: 6 graph steps of 1 launch each"
`

// TestRunScriptLadder runs run.sh with only runtime's and the ladder's
// steps, over stand-ins: the ladder check runs with its JSON into the
// results, its verdicts (not its step lines) go into summary.txt, and a
// failing check makes run.sh exit 1.
func TestRunScriptLadder(t *testing.T) {
	dir := scriptDir(t, map[string]string{
		".gpu/bench.env":    "BENCH_SPEC=llama3_8b\nBENCH_DIMS=\"B=1,S=1,T=4096\"\n",
		".gpu/runtime.test": argsStub,
		".gpu/laddercheck":  ladderStub,
	})
	skip := []string{"SKIP_SUITE=1", "SKIP_SANITIZER=1", "SKIP_REFCHECK=1", "SKIP_BENCH=1", "SKIP_COMPARE=1", "SKIP_NCU=1"}
	for _, tc := range []struct {
		name, env string
		fails     bool
		want      []string
	}{
		{"passing", "", false, []string{"ok llama3_8b", "ok paged_decode", "exit 0"}},
		{"failing", "LADDER_FAIL=1", true, []string{"ok llama3_8b", "FAIL paged_decode", "laddercheck: 1 of 2 targets failed", "exit 1"}},
	} {
		out := filepath.Join(dir, tc.name)
		b, err := runScript(dir, out, append(skip, tc.env)...)
		if failed := err != nil; failed != tc.fails {
			t.Errorf("%s: run.sh: %v, want it to fail: %v\n%s", tc.name, err, tc.fails, b)
		}
		log, err := os.ReadFile(filepath.Join(out, "ladder.log"))
		if want := "laddercheck -json-out " + filepath.Join(out, "ladder.json") + "\n"; err != nil || !strings.HasPrefix(string(log), want) {
			t.Errorf("%s: ladder.log %q (%v), want it to begin %q", tc.name, log, err, want)
		}
		sum, err := os.ReadFile(filepath.Join(out, "summary.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range tc.want {
			if !strings.Contains(string(sum), want) {
				t.Errorf("%s: summary.txt lacks %q:\n%s", tc.name, want, sum)
			}
		}
		if strings.Contains(string(sum), "lengths") {
			t.Errorf("%s: summary.txt has the step lines:\n%s", tc.name, sum)
		}
	}
}
