package interp

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestErrors checks that bad inputs give errors, not panics or results.
func TestErrors(t *testing.T) {
	g := build(t, subst(attnSpec, "dims", ", P, N", "extra", pagedExtra, "layout", pagedLayout(4), "score", "causal(s)"))
	base, full := setup(t, g, map[string]int64{"B": 3, "S": 2, "T": 9}, 1)
	if _, err := Run(g, full, base, Options{}); err != nil {
		t.Fatalf("the unmodified inputs fail: %v", err)
	}
	table, err := NewPageTable(4, base["kv_indptr"], base["kv_pages"], base["kv_last"])
	if err != nil {
		t.Fatal(err)
	}
	set := func(name string, i int, x float64) func(map[string]*Tensor, map[string]int64) {
		return func(in map[string]*Tensor, _ map[string]int64) {
			in[name] = in[name].Clone()
			in[name].Data[i] = x
		}
	}
	tests := []struct {
		name   string
		modify func(in map[string]*Tensor, dims map[string]int64)
		want   string
	}{
		{"missing input", func(in map[string]*Tensor, _ map[string]int64) { delete(in, "q") }, "missing input q"},
		{"missing state", func(in map[string]*Tensor, _ map[string]int64) { delete(in, "kv") }, "missing state kv"},
		{"unknown input", func(in map[string]*Tensor, _ map[string]int64) { in["qq"] = New(1) }, "unknown inputs [qq]"},
		{"wrong shape", func(in map[string]*Tensor, _ map[string]int64) { in["k"] = New(3, 2, 3, 8) }, "input k"},
		{"data shorter than shape", func(in map[string]*Tensor, _ map[string]int64) {
			in["k"] = &Tensor{Shape: in["k"].Shape, Data: in["k"].Data[1:]}
		}, "holds"},
		{"wrong pool shape", func(in map[string]*Tensor, _ map[string]int64) {
			in["kv"] = New(in["kv"].Shape[0]+1, 2, 2, 4, 8)
		}, "physical paged layout"},
		{"unbound dim", func(_ map[string]*Tensor, dims map[string]int64) { delete(dims, "T") }, "dim T is not bound"},
		{"unbound pool dim", func(_ map[string]*Tensor, dims map[string]int64) { delete(dims, "P") }, "dim P is not bound"},
		{"page index out of range", set("kv_pages", 0, float64(full["P"])), "out of the pool"},
		{"negative page index", set("kv_pages", 0, -1), "out of the pool"},
		{"indptr not monotone", set("kv_indptr", 1, float64(table.Indptr[2]+1)), "not monotone"},
		{"indptr not starting at 0", set("kv_indptr", 0, 1), "must start at 0"},
		{"indptr past the indices", set("kv_indptr", 3, float64(full["N"]+1)), "page indices"},
		{"last-page length 0", set("kv_last", 1, 0), "out of range [1, 4]"},
		{"last-page length past the page", set("kv_last", 1, 5), "out of range [1, 4]"},
		{"non-integer page index", set("kv_pages", 0, 0.5), "not an i32"},
		// Sequence 0 holds T + S = 11 tokens after the step: 9 cached.
		{"sequence longer than T", func(in map[string]*Tensor, dims map[string]int64) { dims["T"] = int64(table.Len(0) - 2 - 1) }, "more than T"},
		{"append overwrites a cached token", func(in map[string]*Tensor, _ map[string]int64) {
			// Sequence 1's last page, where its last new token goes, is
			// sequence 0's first page, whose 4 slots hold cached tokens.
			in["kv_pages"] = in["kv_pages"].Clone()
			in["kv_pages"].Data[table.Indptr[2]-1] = in["kv_pages"].Data[table.Indptr[0]]
		}, "overwrite"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, dims := maps.Clone(base), maps.Clone(full)
			tc.modify(in, dims)
			res, err := Run(g, dims, in, Options{})
			if err == nil {
				t.Fatalf("no error; outputs %v", res.Outputs)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// TestPageTableAfterAppend checks the page table convention at its edges:
// the table describes each sequence after the append, so it needs exactly
// indptr[B] page indices (no spare pages), and a table whose sequences are
// shorter than the S tokens appended is an error.
func TestPageTableAfterAppend(t *testing.T) {
	g := build(t, subst(attnSpec, "dims", ", P, N", "extra", pagedExtra, "layout", pagedLayout(4), "score", "causal(s)"))
	in, full := setup(t, g, map[string]int64{"B": 3, "S": 5, "T": 9}, 1)
	want := run(t, g, full, in)

	// Only the indices the sequences own: the same step.
	used := int(in["kv_indptr"].Data[3])
	exact := maps.Clone(in)
	exact["kv_pages"] = FromData([]int{used}, in["kv_pages"].Data[:used])
	dims := maps.Clone(full)
	dims["N"] = int64(used)
	got := run(t, g, dims, exact)
	close(t, "o with exactly indptr[B] indices", got.Outputs["o"], want.Outputs["o"].Data)
	if !slices.Equal(got.States["kv"].Data, want.States["kv"].Data) {
		t.Fatal("the pool after the step depends on the unused page indices")
	}

	// Sequence 1 holds 3 tokens after the step but 5 are appended to it.
	short := maps.Clone(in)
	p := &PageTable{Page: 4, Indptr: []int{0, 4, 5, 7}, Indices: []int{0, 1, 2, 3, 4, 5, 6}, Last: []int{2, 3, 4}}
	short["kv_indptr"], short["kv_pages"], short["kv_last"] = p.Tensors()
	dims = maps.Clone(full)
	dims["N"] = 7
	_, err := Run(g, dims, short, Options{})
	if err == nil || !strings.Contains(err.Error(), "sequence 1 holds 3 tokens after the step, fewer than the 5 it appends") {
		t.Fatalf("got error %v, want one about a sequence shorter than the appended tokens", err)
	}
}
