package laddercheck

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/runtime"
)

// targets returns Targets' Llama-3-8B and paged_decode.
func targets(t *testing.T) (llama, paged Target) {
	t.Helper()
	ts, err := Targets()
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Graph.Name != "llama3_8b" || ts[1].Graph.Name != "paged_decode" {
		t.Fatalf("targets %v, want llama3_8b and paged_decode", ts)
	}
	return ts[0], ts[1]
}

func layout(t *testing.T, tg Target) *Layout {
	t.Helper()
	l, err := NewLayout(tg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func keys(l *Layout) string {
	var ks []string
	for _, b := range l.Buffers {
		ks = append(ks, b.Key()+" "+b.Name)
	}
	return strings.Join(ks, ", ")
}

// TestLayout checks what the check knows of the targets' packages: the
// step inputs and the buffers it resets and downloads, with the
// accessors' names, the sizes at the planned dims, and the paged pool's
// table with its scratch page past the pool.
func TestLayout(t *testing.T) {
	llama, paged := targets(t)
	l := layout(t, llama)
	wantIn := []Input{
		{runtime.StepInput{Name: "x", Kind: runtime.BatchRows, RowBytes: 4096 * 2, Bytes: 4096 * 2}, ir.BF16},
		{runtime.StepInput{Name: "pos", Kind: runtime.BatchRows, RowBytes: 4, Bytes: 4}, ir.I32},
	}
	if !slices.Equal(l.Inputs, wantIn) || l.Pages != nil {
		t.Errorf("llama: inputs %+v, pages %+v; want %+v and none", l.Inputs, l.Pages, wantIn)
	}
	if got, want := keys(l), "input x X, input pos Pos, state kv Kv, output y Y"; got != want {
		t.Errorf("llama: buffers %s, want %s", got, want)
	}
	// The cache [2, B, G, T+S, Dh] bf16; the output one row of 4096 bf16.
	if kv, y := l.Buffers[2], l.Buffers[3]; kv.Bytes != 2*8*4097*128*2 || y.RowBytes != 4096*2 || y.Bytes != 4096*2 {
		t.Errorf("llama: kv %d bytes, y %d bytes in rows of %d", kv.Bytes, y.Bytes, y.RowBytes)
	}

	l = layout(t, paged)
	if want := (runtime.PageTable{Page: 16, Pages: 40, Scratch: 40, NewTokens: 1, MaxLen: 65}); l.Pages == nil || *l.Pages != want {
		t.Errorf("paged: page table %+v, want %+v", l.Pages, want)
	}
	var kinds []runtime.InputKind
	for _, in := range l.Inputs {
		kinds = append(kinds, in.Kind)
	}
	if want := []runtime.InputKind{runtime.BatchRows, runtime.BatchRows, runtime.PageIndptr, runtime.PageIDs, runtime.PageLast}; !slices.Equal(kinds, want) {
		t.Errorf("paged: input kinds %v, want %v", kinds, want)
	}
	if got, want := keys(l), "input x X, input pos Pos, input kv_indptr KvIndptr, input kv_pages KvPages, input kv_last KvLast, state kv Kv, output y Y"; got != want {
		t.Errorf("paged: buffers %s, want %s", got, want)
	}
	// The pool of 40 pages [2, G, 16, Dh] bf16 (the shrunk layer's G=2,
	// Dh=8), without the scratch page.
	if kv := l.Buffers[5]; kv.Bytes != 40*2*2*16*8*2 {
		t.Errorf("paged: kv %d bytes, want 40 pages", kv.Bytes)
	}
	if got := l.StepInputs(); len(got) != 5 || got[3] != l.Inputs[3].StepInput {
		t.Errorf("StepInputs %+v", got)
	}
}

// TestCheckRefuses checks the targets whose steps the check could not
// take.
func TestCheckRefuses(t *testing.T) {
	llama, paged := targets(t)
	for _, c := range []struct {
		name string
		t    Target
		edit func(*Target)
		want string
	}{
		{"unsorted buckets", paged, func(t *Target) { t.Buckets = []int{4, 1} }, "buckets [4 1]"},
		{"bucket above B", paged, func(t *Target) { t.Buckets = []int{1, 9} }, "in 1..8"},
		{"no batch", paged, func(t *Target) { t.Batches = nil }, "no batches"},
		{"batch above the buckets", paged, func(t *Target) { t.Buckets = []int{1, 4} }, "batch 5 outside 1..4"},
		{"padded contiguous", llama, func(t *Target) { t.Dims = map[string]int64{"B": 4, "S": 1, "T": 64}; t.Buckets = []int{4} }, "batch 1 is padded"},
		{"contexts contiguous", llama, func(t *Target) { t.Contexts = []Context{{"c", 2, 3}} }, "contexts over a contiguous cache"},
		{"context too long", paged, func(t *Target) { t.Contexts = []Context{{"c", 2, 66}} }, "lengths 2..66, want them in 1..65"},
		{"context too short", paged, func(t *Target) { t.Contexts = []Context{{"c", 0, 6}} }, "want them in 1..65"},
		{"pool too small", paged, func(t *Target) { t.Dims = map[string]int64{"B": 8, "S": 1, "T": 64, "P": 24, "N": 48} }, "25 pages for the largest batch, the pool has 24"},
	} {
		c.t.Dims = maps.Clone(c.t.Dims)
		c.edit(&c.t)
		if _, err := NewLayout(c.t); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: NewLayout = %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
