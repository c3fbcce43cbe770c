package runtime

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestBuckets(t *testing.T) {
	for _, tc := range []struct {
		max     int
		buckets []int
		want    []int
		err     string
	}{
		{max: 128, want: DefaultBuckets},
		{max: 1, want: []int{1}},
		{max: 3, want: []int{1, 2, 3}},
		{max: 16, want: []int{1, 2, 4, 8, 16}},
		{max: 20, want: []int{1, 2, 4, 8, 16, 20}},
		{max: 500, want: DefaultBuckets},
		{max: 8, buckets: []int{8, 1, 3, 3}, want: []int{1, 3, 8}},
		{max: 8, buckets: []int{16}, err: "1..8"},
		{max: 8, buckets: []int{0, 2}, err: "1..8"},
		{max: 0, err: "batch of 0"},
	} {
		got, err := Buckets(tc.max, tc.buckets...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Buckets(%d, %v): got %v, %v; want an error with %q", tc.max, tc.buckets, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Buckets(%d, %v) = %v, %v; want %v", tc.max, tc.buckets, got, err, tc.want)
		}
	}
}

func TestPickBucket(t *testing.T) {
	ladder := []int{1, 4, 8}
	for batch, want := range map[int]int{1: 1, 2: 4, 3: 4, 4: 4, 5: 8, 8: 8} {
		if got, err := PickBucket(ladder, batch); err != nil || got != want {
			t.Errorf("PickBucket(%v, %d) = %d, %v; want %d", ladder, batch, got, err, want)
		}
	}
	for batch, want := range map[int]string{0: "step of 0", -1: "step of -1", 9: "largest bucket"} {
		if _, err := PickBucket(ladder, batch); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("PickBucket(%v, %d): got %v, want an error with %q", ladder, batch, err, want)
		}
	}
}

// pagedInputs is a paged decode step's inputs: x rows of 8 bytes, then the
// page table, for a planned batch of 4 with room for 16 page ids.
var pagedInputs = []StepInput{
	{Name: "x", Kind: BatchRows, RowBytes: 8, Bytes: 32},
	{Name: "kv_indptr", Kind: PageIndptr, Bytes: 20},
	{Name: "kv_pages", Kind: PageIDs, Bytes: 64},
	{Name: "kv_last", Kind: PageLast, Bytes: 16},
}

var pageTable = &PageTable{Page: 16, Pages: 10, Scratch: 10, NewTokens: 1, MaxLen: 65}

// TestStagePaged pads 2 sequences to a bucket of 4: zero rows of x, and a
// scratch page of one token for each padded sequence.
func TestStagePaged(t *testing.T) {
	x := bytes.Repeat([]byte{7}, 16)
	host := [][]byte{x, encode32([]int32{0, 3, 4}), encode32([]int32{5, 2, 9, 0, 1}), encode32([]int32{16, 1})}
	copies, err := Stage(pagedInputs, pageTable, 2, 4, host)
	if err != nil {
		t.Fatal(err)
	}
	want := []Copy{
		{Input: 0, Data: x, Zero: 16},
		{Input: 1, Data: encode32([]int32{0, 3, 4, 5, 6})},
		{Input: 2, Data: encode32([]int32{5, 2, 9, 0, 10, 10})},
		{Input: 3, Data: encode32([]int32{16, 1, 1, 1})},
	}
	for i, c := range copies {
		if c.Input != want[i].Input || !bytes.Equal(c.Data, want[i].Data) || c.Zero != want[i].Zero {
			t.Errorf("copy %d = %+v, want %+v", i, c, want[i])
		}
	}
	// A full bucket is copied as given.
	host = [][]byte{bytes.Repeat([]byte{1}, 32), encode32([]int32{0, 1, 2, 3, 4}), encode32([]int32{0, 1, 2, 3}), encode32([]int32{1, 2, 3, 4})}
	copies, err = Stage(pagedInputs, pageTable, 4, 4, host)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range copies {
		if !bytes.Equal(c.Data, host[i]) || c.Zero != 0 {
			t.Errorf("full bucket: copy %d = %+v, want the host input unpadded", i, c)
		}
	}
}

func TestStageErrors(t *testing.T) {
	x := make([]byte, 16)
	good := func() [][]byte {
		return [][]byte{x, encode32([]int32{0, 1, 2}), encode32([]int32{0, 1}), encode32([]int32{1, 1})}
	}
	for _, tc := range []struct {
		name          string
		batch, bucket int
		edit          func(h [][]byte) [][]byte
		want          string
	}{
		{"batch 0", 0, 1, nil, "step of 0 sequences"},
		{"batch over bucket", 3, 2, nil, "bucket of 2"},
		{"inputs", 2, 2, func(h [][]byte) [][]byte { return h[:3] }, "3 inputs, want 4"},
		{"rows", 2, 2, func(h [][]byte) [][]byte { h[0] = make([]byte, 15); return h }, "15 bytes, want 16"},
		{"i32", 2, 2, func(h [][]byte) [][]byte { h[3] = make([]byte, 7); return h }, "whole number of i32"},
		{"indptr length", 2, 2, func(h [][]byte) [][]byte { h[1] = encode32([]int32{0, 1}); return h }, "2 offsets"},
		{"indptr start", 2, 2, func(h [][]byte) [][]byte { h[1] = encode32([]int32{1, 1, 2}); return h }, "indptr[0] = 1"},
		{"decreasing", 2, 2, func(h [][]byte) [][]byte { h[1] = encode32([]int32{0, 2, 1}); return h }, "decreases"},
		{"empty sequence", 2, 2, func(h [][]byte) [][]byte {
			h[1], h[3] = encode32([]int32{0, 0, 1}), encode32([]int32{0, 1})
			return h
		}, "holds 0 tokens"},
		{"last", 2, 2, func(h [][]byte) [][]byte { h[3] = encode32([]int32{17, 1}); return h }, "last = 17"},
		{"too long", 2, 2, func(h [][]byte) [][]byte {
			h[1], h[2] = encode32([]int32{0, 6, 7}), encode32([]int32{0, 1, 2, 3, 4, 5, 6})
			return h
		}, "holds 81 tokens"},
		{"page id", 2, 2, func(h [][]byte) [][]byte { h[2] = encode32([]int32{0, 10}); return h }, "page id 10"},
		{"scratch id", 2, 2, func(h [][]byte) [][]byte { h[2] = encode32([]int32{10, 1}); return h }, "page id 10"},
		{"few ids", 2, 2, func(h [][]byte) [][]byte { h[2] = encode32([]int32{0}); return h }, "1 page ids"},
		{"no room", 2, 4, nil, "kv_pages: 16 bytes for a buffer of 12"},
	} {
		h := good()
		if tc.edit != nil {
			h = tc.edit(h)
		}
		inputs := pagedInputs
		if tc.name == "no room" {
			inputs = slices.Clone(pagedInputs)
			inputs[2].Bytes = 12
		}
		_, err := Stage(inputs, pageTable, tc.batch, tc.bucket, h)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestAsBytes(t *testing.T) {
	if got := AsBytes([]int32{1, -1}); !bytes.Equal(got, encode32([]int32{1, -1})) {
		t.Errorf("AsBytes = %v", got)
	}
	if AsBytes([]uint16(nil)) != nil {
		t.Error("AsBytes of nil is not nil")
	}
}
