package interp

import (
	"maps"
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
		{"sequence longer than T", func(in map[string]*Tensor, dims map[string]int64) { dims["T"] = int64(table.Len(0) - 1) }, "more than T"},
		{"append overwrites a cached token", func(in map[string]*Tensor, _ map[string]int64) {
			// Give sequence 0's first spare page to a page sequence 1 uses.
			in["kv_pages"] = in["kv_pages"].Clone()
			in["kv_pages"].Data[table.Indptr[3]] = in["kv_pages"].Data[table.Indptr[1]]
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

// TestNoSpareIndices checks that appending into a table without room for
// the new tokens is an error.
func TestNoSpareIndices(t *testing.T) {
	g := build(t, subst(attnSpec, "dims", ", P, N", "extra", pagedExtra, "layout", pagedLayout(4), "score", "causal(s)"))
	in, full := setup(t, g, map[string]int64{"B": 3, "S": 5, "T": 9}, 1)
	used := int(in["kv_indptr"].Data[3])
	in["kv_pages"] = FromData([]int{used}, in["kv_pages"].Data[:used])
	full["N"] = int64(used)
	_, err := Run(g, full, in, Options{})
	if err == nil || !strings.Contains(err.Error(), "no page for token") {
		t.Fatalf("got error %v, want one about missing pages", err)
	}
}
