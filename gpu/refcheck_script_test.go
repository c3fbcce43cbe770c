package gpu

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// refdumpStub stands in for .gpu/refdump: it prints its arguments and,
// unless REFDUMP_FAIL is set, writes a manifest and one case's program
// under its -out directory.
const refdumpStub = `#!/usr/bin/env bash
echo "refdump $*"
[ -n "${REFDUMP_FAIL:-}" ] && exit 3
while [ $# -gt 0 ]; do
	if [ "$1" = -out ]; then out=$2; fi
	shift
done
mkdir -p "$out/c00_tiny"
echo '{"cases": []}' >"$out/cases.json"
echo 'def layer(t, dims, mode): pass' >"$out/c00_tiny/layer.py"
echo 'x' >"$out/c00_tiny/inputs.safetensors"
`

// pythonStub stands in for python3 running refcheck.py: it prints its
// arguments and a verdict, and writes refcheck.json under --out; with
// PY_SKIP set, a plan skipped and the run failed, as refcheck.py fails it.
const pythonStub = `#!/usr/bin/env bash
echo "python $*"
while [ $# -gt 0 ]; do
	if [ "$1" = --out ]; then out=$2; fi
	shift
done
if [ -n "${PY_SKIP:-}" ]; then
	echo 'tiny/small unfused - skip: %55.y has no device buffer'
	echo 'verdict: FAIL: 1 plan(s) not checked'
	echo '{"passed": false}' | tee "$out/refcheck.json"
	exit 1
fi
echo 'tiny/small fused y 0.1 0.2 0.5 pass'
echo 'verdict: pass'
echo '{"passed": true}' | tee "$out/refcheck.json"
`

// TestRefcheckScript runs refcheck.sh over stand-ins for refdump and
// python3: both steps run with their arguments (REF_CASES and REF_MUTATE
// passed to refdump), the summary records each,
// the manifest, the programs, the logs and refcheck.json come back in the
// one archive and the data does not; with refcheck.py failing a run where
// a plan was skipped, the script exits 1 and the summary says why; with
// refdump failing, the script says refcheck did not run and exits 1.
func TestRefcheckScript(t *testing.T) {
	for _, tool := range []string{"bash", "tar", "gzip", "timeout"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	dir := t.TempDir()
	gpu := filepath.Join(dir, ".gpu")
	if err := os.MkdirAll(gpu, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("refcheck.sh")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"refcheck.sh": string(src), "refdump": refdumpStub, "python": pythonStub} {
		if err := os.WriteFile(filepath.Join(gpu, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(out string, env ...string) (string, error) {
		cmd := exec.Command("bash", filepath.Join(gpu, "refcheck.sh"), out)
		cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "REF_") })
		cmd.Env = append(cmd.Env, append(env, "PYTHON="+filepath.Join(gpu, "python"), "REF_DATA="+filepath.Join(dir, "data"))...)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	out := filepath.Join(dir, "out")
	if b, err := run(out, "REF_CASES=^tiny/", "REF_RATIO=3", "REF_MUTATE=attention=1.1"); err != nil {
		t.Fatalf("refcheck.sh: %v\n%s", err, b)
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"refdump: exit 0", "refcheck: exit 0", "verdict: pass", `{"passed": true}`} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	got := archive(t, filepath.Join(out, "refcheck.tgz"))
	data := filepath.Join(dir, "data")
	for name, want := range map[string]string{
		"refcheck/refdump.log":                "refdump -out " + data + " -kernels " + filepath.Join(gpu, "kernels") + " -cases ^tiny/ -mutate attention=1.1",
		"refcheck/refcheck.log":               "python " + filepath.Join(gpu, "refcheck.py") + " " + data + " --out ",
		"refcheck/cases.json":                 `{"cases": []}`,
		"refcheck/programs/c00_tiny/layer.py": "def layer",
		"refcheck/refcheck.json":              `"passed": true`,
		"refcheck/summary.txt":                "refcheck: exit 0",
	} {
		if !strings.Contains(got[name], want) {
			t.Errorf("archive's %s lacks %q: %q", name, want, got[name])
		}
	}
	if !strings.Contains(got["refcheck/refcheck.log"], "--ratio 3 --eps-rel 1e-6") {
		t.Errorf("refcheck.py's arguments: %q", got["refcheck/refcheck.log"])
	}
	for name := range got {
		if strings.HasSuffix(name, ".safetensors") {
			t.Errorf("the archive holds data: %s", name)
		}
	}

	out = filepath.Join(dir, "out2")
	b, err := run(out, "PY_SKIP=1")
	sum, _ = os.ReadFile(filepath.Join(out, "summary.txt"))
	if err == nil {
		t.Errorf("with a plan skipped: refcheck.sh exits 0\n%s", b)
	}
	for _, want := range []string{"refcheck: exit 1", "verdict: FAIL: 1 plan(s) not checked", `{"passed": false}`} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("with a plan skipped, the summary lacks %q:\n%s", want, sum)
		}
	}

	out = filepath.Join(dir, "out3")
	os.RemoveAll(data)
	b, err = run(out, "REFDUMP_FAIL=1")
	if err == nil || !strings.Contains(b, "refdump: exit 3") || !strings.Contains(b, "refcheck: not run") {
		t.Errorf("with refdump failing: %v\n%s", err, b)
	}
}
