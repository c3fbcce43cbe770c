package runtime

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"
)

// This file is the part of the CUDA-graph ladder that needs no GPU (and so
// no build tag): the choice of buckets, and the staging of one step's host
// inputs into the copies that fill a layer's static buffers, padding
// included. ladder_cuda.go captures and replays.

// DefaultBuckets are the batch sizes a ladder captures unless told others,
// clipped to the layer's planned batch (see Buckets).
var DefaultBuckets = []int{1, 2, 4, 8, 16, 32, 64, 128}

// Buckets returns the batch sizes of a ladder for a layer planned for at
// most max sequences: the given ones sorted and without repeats, each in
// 1..max; or, when none are given, the DefaultBuckets below max and then
// max itself (at most 128): 1, 2, 3 for max 3.
func Buckets(max int, buckets ...int) ([]int, error) {
	if max < 1 {
		return nil, fmt.Errorf("runtime: ladder for a batch of %d", max)
	}
	if len(buckets) == 0 {
		top := min(max, DefaultBuckets[len(DefaultBuckets)-1])
		var out []int
		for _, b := range DefaultBuckets {
			if b < top {
				out = append(out, b)
			}
		}
		return append(out, top), nil
	}
	out := slices.Clone(buckets)
	slices.Sort(out)
	out = slices.Compact(out)
	if out[0] < 1 || out[len(out)-1] > max {
		return nil, fmt.Errorf("runtime: ladder buckets %v: each must lie in 1..%d (the planned batch)", buckets, max)
	}
	return out, nil
}

// PickBucket returns the smallest bucket (buckets sorted, as Buckets
// returns them) that holds batch sequences.
func PickBucket(buckets []int, batch int) (int, error) {
	if batch < 1 {
		return 0, fmt.Errorf("runtime: step of %d sequences", batch)
	}
	i, _ := slices.BinarySearch(buckets, batch)
	if i == len(buckets) {
		return 0, fmt.Errorf("runtime: step of %d sequences: the largest bucket of the ladder %v is %d", batch, buckets, buckets[len(buckets)-1])
	}
	return buckets[i], nil
}

// InputKind says how a step copies one input into its static buffer.
type InputKind uint8

// The kinds of step inputs.
const (
	// BatchRows is an input whose leading axis is the batch: the step's
	// sequences' rows are copied, the rows past them up to the bucket are
	// zeroed.
	BatchRows InputKind = iota
	// PageIndptr, PageIDs and PageLast are a paged cache's page table
	// (i32): sequence b owns page ids [indptr[b], indptr[b+1]), the last
	// holding last[b] tokens. Padded sequences get one page each, the
	// scratch page (see PageTable).
	PageIndptr
	PageIDs
	PageLast
)

func (k InputKind) String() string {
	switch k {
	case BatchRows:
		return "batch rows"
	case PageIndptr:
		return "page indptr"
	case PageIDs:
		return "page ids"
	case PageLast:
		return "last-page lengths"
	}
	return fmt.Sprintf("InputKind(%d)", int(k))
}

// StepInput describes one input of a ladder step.
type StepInput struct {
	Name string
	Kind InputKind
	// RowBytes is the size of one sequence's row of a BatchRows input at
	// the dims the graphs are captured for.
	RowBytes int64
	// Bytes is the size of the static buffer the input is copied into.
	Bytes int64
}

// PageTable describes a paged cache to the staging of a step.
type PageTable struct {
	// Page is the tokens per page; Pages the pages the caller's tables may
	// name (ids 0..Pages-1).
	Page, Pages int64
	// Scratch is the page every padded sequence owns and writes its new
	// tokens into: a page of the pool outside 0..Pages-1, so no real
	// sequence's page.
	Scratch int32
	// NewTokens is S, the tokens a step appends per sequence; MaxLen is
	// T+S, the longest a sequence may be after the append.
	NewTokens, MaxLen int64
}

// Copy is one copy of a step: Data to the start of input Input's buffer,
// then Zero zero bytes right after it.
type Copy struct {
	Input int
	Data  []byte
	Zero  int64
}

// Stage checks a step's host inputs (host[i] the bytes of inputs[i]) for
// batch sequences padded to bucket, and returns the copies that fill the
// static buffers. Padding: the rows past batch of BatchRows inputs are
// zero; with a paged cache each padded sequence owns the one page
// pages.Scratch and holds S tokens (the ones it appends), so the append of
// a padded sequence writes into the scratch page only, and the real
// sequences' tables are checked to name pages below pages.Pages, to hold
// between S and T+S tokens (an append before the first token would write
// into another sequence's page) and a last page of 1..page tokens.
func Stage(inputs []StepInput, pages *PageTable, batch, bucket int, host [][]byte) ([]Copy, error) {
	if batch < 1 || batch > bucket {
		return nil, fmt.Errorf("runtime: step of %d sequences in a bucket of %d", batch, bucket)
	}
	if len(host) != len(inputs) {
		return nil, fmt.Errorf("runtime: step with %d inputs, want %d", len(host), len(inputs))
	}
	pad := int64(bucket - batch)
	var indptr, last, ids []int32
	at := [3]int{-1, -1, -1} // inputs of the indptr, ids, last
	out := make([]Copy, len(inputs))
	for i, in := range inputs {
		h := host[i]
		out[i] = Copy{Input: i, Data: h}
		var err error
		switch in.Kind {
		case BatchRows:
			if want := int64(batch) * in.RowBytes; int64(len(h)) != want {
				return nil, fmt.Errorf("runtime: input %s: %d bytes, want %d (%d sequences of %d bytes)", in.Name, len(h), want, batch, in.RowBytes)
			}
			out[i].Zero = pad * in.RowBytes
		case PageIndptr:
			indptr, err = int32s(in.Name, h)
			at[0] = i
		case PageIDs:
			ids, err = int32s(in.Name, h)
			at[1] = i
		case PageLast:
			last, err = int32s(in.Name, h)
			at[2] = i
		default:
			return nil, fmt.Errorf("runtime: input %s: unknown kind %v", in.Name, in.Kind)
		}
		if err != nil {
			return nil, err
		}
	}
	if at != [3]int{-1, -1, -1} {
		if pages == nil || at[0] < 0 || at[1] < 0 || at[2] < 0 {
			return nil, fmt.Errorf("runtime: a page table needs its indptr, ids and last-page lengths, and a PageTable")
		}
		ip, id, ls, err := padPages(pages, batch, bucket, indptr, ids, last)
		if err != nil {
			return nil, fmt.Errorf("runtime: page table (%s, %s, %s): %w", inputs[at[0]].Name, inputs[at[1]].Name, inputs[at[2]].Name, err)
		}
		out[at[0]].Data, out[at[1]].Data, out[at[2]].Data = ip, id, ls
	}
	for i, c := range out {
		if n := int64(len(c.Data)) + c.Zero; n > inputs[i].Bytes {
			return nil, fmt.Errorf("runtime: input %s: %d bytes for a buffer of %d", inputs[i].Name, n, inputs[i].Bytes)
		}
	}
	return out, nil
}

// padPages checks the page table of batch sequences and returns it padded
// to bucket sequences, encoded.
func padPages(pt *PageTable, batch, bucket int, indptr, ids, last []int32) (ip, id, ls []byte, err error) {
	if len(indptr) != batch+1 || len(last) != batch {
		return nil, nil, nil, fmt.Errorf("%d offsets and %d last-page lengths for %d sequences (want %d and %d)", len(indptr), len(last), batch, batch+1, batch)
	}
	if indptr[0] != 0 {
		return nil, nil, nil, fmt.Errorf("indptr[0] = %d, want 0", indptr[0])
	}
	for b := range batch {
		n := int64(indptr[b+1]) - int64(indptr[b])
		if n < 0 {
			return nil, nil, nil, fmt.Errorf("indptr decreases at sequence %d", b)
		}
		var length int64
		switch {
		case n == 0 && last[b] != 0:
			return nil, nil, nil, fmt.Errorf("sequence %d has no page but last = %d", b, last[b])
		case n > 0 && (last[b] < 1 || int64(last[b]) > pt.Page):
			return nil, nil, nil, fmt.Errorf("sequence %d: last = %d outside 1..%d", b, last[b], pt.Page)
		case n > 0:
			length = (n-1)*pt.Page + int64(last[b])
		}
		if length < pt.NewTokens || length > pt.MaxLen {
			return nil, nil, nil, fmt.Errorf("sequence %d holds %d tokens after the append, outside %d..%d (S..T+S)", b, length, pt.NewTokens, pt.MaxLen)
		}
	}
	used := int(indptr[batch])
	if len(ids) < used {
		return nil, nil, nil, fmt.Errorf("%d page ids for the %d pages indptr names", len(ids), used)
	}
	for j, p := range ids[:used] {
		if p < 0 || int64(p) >= pt.Pages {
			return nil, nil, nil, fmt.Errorf("page id %d (entry %d) outside 0..%d", p, j, pt.Pages-1)
		}
	}
	pad := bucket - batch
	if pad > 0 && pt.NewTokens > pt.Page {
		return nil, nil, nil, fmt.Errorf("a padded sequence appends %d tokens, more than its one scratch page holds (%d)", pt.NewTokens, pt.Page)
	}
	pIndptr := slices.Clone(indptr)
	pIDs := slices.Clone(ids[:used])
	pLast := slices.Clone(last)
	for k := range pad {
		pIndptr = append(pIndptr, indptr[batch]+int32(k)+1)
		pIDs = append(pIDs, pt.Scratch)
		pLast = append(pLast, int32(pt.NewTokens))
	}
	return encode32(pIndptr), encode32(pIDs), encode32(pLast), nil
}

func int32s(name string, b []byte) ([]int32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("runtime: input %s: %d bytes, not a whole number of i32", name, len(b))
	}
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

func encode32(v []int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}

// Element is a Go type a generated step takes host data in: bf16 and f16
// as uint16 bits, fp8 as uint8, f32 and i32 as themselves.
type Element interface {
	~uint8 | ~uint16 | ~int32 | ~float32
}

// AsBytes is the memory of s as bytes (no copy), in the machine's byte
// order, which the GPU shares (little-endian).
func AsBytes[T Element](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}
