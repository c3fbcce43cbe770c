package nvrtc

import (
	"os"
	"reflect"
	"testing"
)

// The logs under testdata are NVRTC 12.4's own (see compile_test.go for the
// first kernel pair; the second is a spilling kernel built for sm_80; the
// third two entries of a Llama-3-8B prefill module, lines cut from its log,
// whose attention kernel overlapped a softmax with P·V while converting
// the probabilities into registers that P·V read).
func TestParsePtxasInfo(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []KernelInfo
	}{
		{"testdata/sm90a_smem.log", []KernelInfo{
			{Name: "block_sum", Arch: "sm_90a", Registers: 12, SharedBytes: 1024},
			{Name: "axpy", Arch: "sm_90a", Registers: 8},
		}},
		{"testdata/sm80_spills.log", []KernelInfo{
			{Name: "_Z4tmplILi3EEvPf", Arch: "sm_80", Registers: 8},
			{Name: "spilly", Arch: "sm_80", Registers: 32, StackBytes: 1696, SpillStores: 1800, SpillLoads: 1884},
		}},
		{"testdata/sm90a_serialized.log", []KernelInfo{
			{Name: "k02_attention_attention", Arch: "sm_90a", Registers: 168, SharedBytes: 128, StackBytes: 24, SpillStores: 40, SpillLoads: 40, Serialized: true},
			{Name: "k01_gemm_matmul_rope_append", Arch: "sm_90a", Registers: 212, SharedBytes: 29184, StackBytes: 32},
		}},
		{"", nil},
	} {
		log := ""
		if tc.file != "" {
			b, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			log = string(b)
		}
		got, err := ParsePtxasInfo(log)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.file, got, tc.want)
		}
	}
}

func TestParsePtxasInfoBadNumber(t *testing.T) {
	log := "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n" +
		"ptxas info    : Function properties for k\n" +
		"ptxas         .     99999999999999999999 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
	if _, err := ParsePtxasInfo(log); err == nil {
		t.Error("an overflowing number parsed")
	}
}

func TestSpills(t *testing.T) {
	if (KernelInfo{}).Spills() || !(KernelInfo{SpillLoads: 4}).Spills() {
		t.Error("Spills is wrong")
	}
}

func TestIsRealArch(t *testing.T) {
	for arch, want := range map[string]bool{"sm_90a": true, "sm_80": true, "compute_90a": false, "": false} {
		if IsRealArch(arch) != want {
			t.Errorf("IsRealArch(%q) = %v", arch, !want)
		}
	}
}
