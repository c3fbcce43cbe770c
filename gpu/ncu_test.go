package gpu

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ncuStub stands in for ncu: profiling (-o REP) records its arguments in
// REP.ncu-rep; importing (-i REP) prints a details page, or
// for --page source a SASS CSV of two instructions with stall samples and
// excess shared wavefronts and global sectors.
const ncuStub = `#!/usr/bin/env bash
if [ "$1" = -i ]; then
	case "$*" in
	*"--page details"*) echo "details of $2: $(cat "$2")" ;;
	*"--page source"*)
		echo '"Address","Source","Warp Stall Sampling (All Samples)","stall_long_sb","L1 Wavefronts Shared Excessive","L2 Theoretical Sectors Global Excessive"'
		echo '"0x0","STS [R1], R2","5","5","96","0"'
		echo '"0x10","@P0 LDGSTS.E.BYPASS.128 [R3], desc[UR4][R5.64]","1","1","32","64"' ;;
	esac
	exit 0
fi
args="$*"
while [ $# -gt 0 ]; do
	if [ "$1" = -o ]; then rep=$2; fi
	shift
done
echo "profiled: $args" >"$rep.ncu-rep"
`

// TestNCUScript runs ncu.sh over a stand-in ncu and the real
// ncu_stalls.py: each NAME:REGEX:DIMS argument gets its details page and
// its stalls with the excess accesses ranked by opcode, a malformed one a
// line in the summary, and everything comes back in the one archive.
func TestNCUScript(t *testing.T) {
	for _, tool := range []string{"bash", "python3", "gzip", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	dir := t.TempDir()
	gpu, bin := filepath.Join(dir, ".gpu"), filepath.Join(dir, "bin")
	for _, d := range []string{gpu, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{filepath.Join(bin, "ncu"): ncuStub, filepath.Join(gpu, "bench.env"): "BENCH_SPEC=llama3_8b\nBENCH_DIMS=\"B=1,S=1,T=4096\"\n"}
	for dst, src := range map[string]string{filepath.Join(gpu, "ncu.sh"): "ncu.sh", filepath.Join(gpu, "ncu_stalls.py"): "../bench/ncu_stalls.py"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		files[dst] = string(b)
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command("bash", filepath.Join(gpu, "ncu.sh"), out, "k05_b64:^k05_gemm:B=64,S=1,T=4096", "bad")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ncu.sh: %v\n%s", err, b)
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"k05_b64: ncu exit 0",
		"-- excess shared wavefronts: 128\n   by opcode: STS 75%, LDGSTS 25%",
		"-- excess global sectors: 64\n   by opcode: LDGSTS 100%",
		"bad: not NAME:REGEX:DIMS",
	} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	got := archive(t, filepath.Join(out, "ncu.tgz"))
	if !strings.Contains(got["ncu/k05_b64.txt"], "-k regex:^k05_gemm -c 1 -o ") || !strings.Contains(got["ncu/k05_b64.txt"], filepath.Join(gpu, "fuser")+" profile llama3_8b -dims B=64,S=1,T=4096 -kernels "+filepath.Join(gpu, "kernels")) {
		t.Errorf("ncu did not profile the kernel of the step at the dims: %q", got["ncu/k05_b64.txt"])
	}
	for name, want := range map[string]string{
		"ncu/k05_b64.txt":        "k05_b64.ncu-rep: profiled: --clock-control none",
		"ncu/k05_b64.stalls.txt": "      5  83.3%  STS [R1], R2   [long_sb 5]",
		"ncu/summary.txt":        "k05_b64: ncu exit 0",
	} {
		if !strings.Contains(got[name], want) {
			t.Errorf("archive's %s lacks %q: %q", name, want, got[name])
		}
	}
	if _, ok := got["ncu/k05_b64.sass.csv.gz"]; !ok {
		t.Errorf("archive lacks the source page: %v", slices.Sorted(maps.Keys(got)))
	}
}
