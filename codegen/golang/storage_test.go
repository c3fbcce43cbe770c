package golang

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/plan"
)

// TestStorageBytes sizes the states: a contiguous cache that is appended to
// for T+S tokens, a paged one as its pool, a read-only one as declared.
func TestStorageBytes(t *testing.T) {
	for _, tc := range []struct {
		spec, state string
		want        func(declared int64) int64
	}{
		{"tiny", "kv", func(int64) int64 { return 2 * 2 * 2 * (17 + 3) * 4 * 2 }},     // [2, B, G, T+S, Dh] bf16
		{"paged_decode", "kv", func(int64) int64 { return 64 * 2 * 8 * 16 * 64 * 2 }}, // [P, 2, G, page, Dh] bf16
		{"cascade", "kv", func(d int64) int64 { return d / 17 * (17 + 3) }},
		{"cascade", "prefix", func(d int64) int64 { return d }},
	} {
		p, dims := planSpec(t, tc.spec, false)
		found := false
		for _, st := range p.Graph.States {
			if st.Name != tc.state {
				continue
			}
			found = true
			declared, err := plan.Bytes(st, dims)
			if err != nil {
				t.Fatal(err)
			}
			got, err := storageBytes(p.Graph, st, dims)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.want(declared); got != want {
				t.Errorf("%s state %s: %d bytes, want %d", tc.spec, tc.state, got, want)
			}
		}
		if !found {
			t.Errorf("%s has no state %s", tc.spec, tc.state)
		}
	}
}

// TestTensorTable lists the params, then the states, with the storage
// shapes LoadSafetensors expects.
func TestTensorTable(t *testing.T) {
	p, dims := planSpec(t, "paged_decode", false)
	l, err := newLayer(p, dims, DefaultKernels(p))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range l.tensorList {
		got = append(got, fmt.Sprintf("%s %s %s %v", x.buf.Role, x.buf.Value.Name, x.dtype, x.shape))
	}
	want := []string{
		"param wn1 BF16 [2048]", "param wqkv BF16 [2048 3072]", "param wo BF16 [2048 2048]",
		"param wn2 BF16 [2048]", "param wgu BF16 [2048 16384]", "param wd BF16 [8192 2048]",
		"state kv BF16 [64 2 8 16 64]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tensors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
