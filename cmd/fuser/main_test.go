package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	err := run(args, &out)
	if err == nil {
		return out.String(), 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return out.String() + err.Error(), ee.code
	}
	return out.String() + err.Error(), 1
}

func TestDefault(t *testing.T) {
	out, code := runCmd(t)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"checked the embedded spec llama3_8b", "output y", "fused plan: 7 kernels, 7 launches", "floor"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check", "tiny"}, 0, "layer tiny is well-formed"},
		{[]string{"check", "../../testdata/malformed/two_semantic_errors.fu"}, 2, "2 error(s)"},
		{[]string{"check", "no_such_spec"}, 2, "no embedded spec"},
		{[]string{"eval", "tiny", "-dims", "B=2,S=3"}, 2, "-dims must bind T"},
		{[]string{"eval", "tiny", "-dims", "B=2,Q=3"}, 2, "has no dim Q"},
		{[]string{"eval", "tiny", "-dims", "B=two"}, 2, "not NAME=COUNT"},
		{[]string{"eval", "tiny", "-dims", "B=2,S=1,B=3,T=4"}, 2, "B is bound twice (B=2 and B=3)"},
		{[]string{"eval", "tiny", "-dims", "B=-1,S=1,T=4"}, 2, "B=-1 is negative"},
		{[]string{"eval", "tiny", "-dims", "B=0,S=1,T=4"}, 2, "input x : bf16[B, S, 16]: extent B is 0 at B=0"},
		{[]string{"plan", "tiny", "-dims", "B=1,S=4,T=0", "--traffic"}, 0, "fused plan"},
		{[]string{"plan", "tiny", "-dims", "B=4611686018427387904,S=2,T=4", "--traffic"}, 2, "byte count"},
		{[]string{"plan", "tiny", "--dump-after=nope"}, 2, `no pass "nope"`},
		{[]string{"plan"}, 2, "usage: fuser plan"},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"plan", "tiny", "-split-keys", "64"}, 2, "-split-keys needs -dims"},
		{[]string{"plan", "tiny", "-dims", "B=2,S=1,T=300", "-split-keys", "64"}, 0, "splits=5 split-keys=64"},
		{[]string{"build", "tiny", "-dims", "B=1,S=1,T=8", "-o", "/dev/null/x", "-split-keys", "-1"}, 2, "-split-keys -1 is negative"},
		{[]string{"export", "--torch", "tiny"}, 0, "def layer(t: dict[str, torch.Tensor], dims: dict[str, int], mode: str)"},
		{[]string{"export", "tiny", "--torch", "-dims", "B=2,S=1"}, 0, `DEFAULT_DIMS = {"B": 2, "S": 1}`},
		{[]string{"export", "tiny"}, 2, "fuser export: name the format (--torch)"},
		{[]string{"export", "--torch", "tiny", "-dims", "Q=1"}, 2, "has no dim Q"},
		{[]string{"export", "--torch", "tiny", "-dims", "B=two"}, 2, "not NAME=COUNT"},
		{[]string{"export", "--torch", "-frobnicate", "tiny"}, 2, "flag provided but not defined: -frobnicate"},
		{[]string{"export", "--torch"}, 2, "usage: fuser export --torch SPEC"},
		{[]string{"export", "--torch", "../../testdata/malformed/two_semantic_errors.fu"}, 2, "2 error(s)"},
		{[]string{"help"}, 0, "passes (fuser plan --dump-after=NAME)"},
		{[]string{"help"}, 0, "export --torch SPEC"},
		{[]string{"help"}, 0, "profile SPEC -dims"},
		{[]string{"profile", "tiny", "-dims", "B=1,S=1,T=8"}, 1, "fuser profile: this fuser was built without CUDA"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, code := runCmd(t, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s", code, tt.code, tt.want, out)
			}
		})
	}
}

// TestEvalJSON evaluates a paged decode step (its page-pool dims derived)
// and the varlen layer (packed prompts over a ragged cache).
func TestEvalJSON(t *testing.T) {
	for _, tc := range []struct {
		spec, dims string
		derived    bool
	}{
		{"paged_decode", "B=2,S=1,T=33", true},
		{"../../specs/testlayers/varlen/small_ragged.fu", "B=5,N=9,T=6", false},
	} {
		out, code := runCmd(t, "eval", tc.spec, "-dims", tc.dims, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.spec, code, out)
		}
		var got evalOutput
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Outputs) != 1 || !got.Outputs[0].Finite || got.Outputs[0].RMS == 0 {
			t.Errorf("%s: outputs %+v", tc.spec, got.Outputs)
		}
		if (len(got.Derived) > 0) != tc.derived {
			t.Errorf("%s: derived dims %v, want some: %v", tc.spec, got.Derived, tc.derived)
		}
	}
}

func TestPlanJSON(t *testing.T) {
	out, code := runCmd(t, "plan", "llama3_8b", "-dims", "B=1,S=1,T=4096", "--traffic", "--explain", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	var got planOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Plan.Kernels) != 7 || got.Traffic == nil || len(got.Explain) == 0 {
		t.Errorf("kernels %d, traffic %v, explain %d", len(got.Plan.Kernels), got.Traffic != nil, len(got.Explain))
	}
	if r := got.Ratios["fused_over_floor"]; r < 1 || r > 1.05 {
		t.Errorf("fused/floor %v", r)
	}
}

func TestPlanText(t *testing.T) {
	out, code := runCmd(t, "plan", "tiny", "--dump-after=attention", "--explain")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"=== after attention", "= attention ", "fusion decisions:", "(epilogue)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestPlanVarlen plans the packed layers with the code generator's checks,
// unbound (every pass that needs no dims) and bound, with the fusion log
// and both plans' traffic: norms, GEMMs with their epilogues (RoPE and the
// append of each sequence's tokens in the QKV GEMM) and one varlen
// attention kernel over the sequences' query tiles.
func TestPlanVarlen(t *testing.T) {
	for _, tc := range []struct{ spec, dims string }{
		{"../../specs/testlayers/varlen/small_ragged.fu", "B=5,N=123,T=40"},
		{"../../specs/testlayers/varlen/paged_window.fu", "B=5,N=123,T=40,I=55,P=60"},
	} {
		if out, code := runCmd(t, "plan", tc.spec, "--explain"); code != 0 || !strings.Contains(out, "varlen}") {
			t.Fatalf("%s unbound: exit %d, want a varlen attention node:\n%s", tc.spec, code, out)
		}
		out, code := runCmd(t, "plan", tc.spec, "-dims", tc.dims, "--explain", "--traffic", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.spec, code, out)
		}
		var got planOutput
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, k := range got.Plan.Kernels {
			names = append(names, k.Name)
		}
		want := "k00_row_mul_mean_add_rsqrt k01_gemm_matmul_rope_append k02_attention_attention k03_gemm_matmul_add"
		if len(names) != 7 || strings.Join(names[:4], " ") != want || got.Traffic == nil || len(got.Explain) == 0 {
			t.Errorf("%s: kernels %v, traffic %v, explain %d: want 7 kernels from %s", tc.spec, names, got.Traffic != nil, len(got.Explain), want)
		}
		if r := got.Ratios["unfused_over_fused_bytes"]; !(r > 1) {
			t.Errorf("%s: unfused/fused bytes %v", tc.spec, r)
		}
	}
}

// TestCheckOutputOfInput checks that an output bound directly to an input
// is listed under its own name, and the input under its own.
func TestCheckOutputOfInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "copy.fu")
	src := "layer copy\ndim B\ninput x : f32[B, 4]\noutput y : f32[B, 4]\noutput z : f32[B, 4]\ny = x\nz = y\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runCmd(t, "check", path)
	for _, want := range []string{"input  x ", "output y ", "output z "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d; output lacks %q:\n%s", code, want, out)
		}
	}
}

// TestExportRefused checks that fuser export refuses, positioned and with
// exit status 2, a spec whose ops a PyTorch program cannot compute as
// written (fp8e4m3 arithmetic), and writes nothing.
func TestExportRefused(t *testing.T) {
	dir := t.TempDir()
	path, out := filepath.Join(dir, "q8.fu"), filepath.Join(dir, "q8.py")
	src := "layer q8\ndim B\ninput x : fp8e4m3[B, 8]\noutput y : bf16[B, 8]\ny = cast(x * x, bf16)\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, code := runCmd(t, "export", "--torch", path, "-o", out)
	for _, want := range []string{path + ":5:12: PyTorch has no fp8e4m3 mul", "               ^", "hint: cast(x, bf16)", "1 error(s)"} {
		if code != 2 || !strings.Contains(got, want) {
			t.Errorf("exit %d; output lacks %q:\n%s", code, want, got)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written", out)
	}
}
