package laddercheck

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/fuser-dev/fuser/gpu"
)

func int32s(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// TestStepsPaged checks the paged target's steps: every batch at both
// contexts, in the bucket the ladder picks, the lengths in the context's
// range, each sequence's own pages of the pool (none the scratch page)
// holding its length, the positions of its new token, rows in [-1, 1];
// the same seed draws the same steps, another seed others.
func TestStepsPaged(t *testing.T) {
	_, paged := targets(t)
	l := layout(t, paged)
	steps, err := l.Steps(paged, 1)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range steps {
		names = append(names, fmt.Sprintf("%s:%d", s.Name(), s.Bucket))
	}
	want := []string{"short context/batch=1:1", "short context/batch=3:4", "short context/batch=5:8",
		"long context/batch=1:1", "long context/batch=3:4", "long context/batch=5:8"}
	if !slices.Equal(names, want) {
		t.Fatalf("steps %v, want %v", names, want)
	}
	for i, s := range steps {
		c := paged.Contexts[i/3]
		indptr, ids, last, pos := int32s(s.Host[2]), int32s(s.Host[3]), int32s(s.Host[4]), int32s(s.Host[1])
		if len(s.Lengths) != s.Batch || len(indptr) != s.Batch+1 || len(last) != s.Batch || len(pos) != s.Batch {
			t.Fatalf("%s: %d lengths, %d offsets, %d last, %d positions", s.Name(), len(s.Lengths), len(indptr), len(last), len(pos))
		}
		seen := map[int32]bool{}
		for b, n := range s.Lengths {
			if n < c.Min || n > c.Max {
				t.Errorf("%s: length %d outside %d..%d", s.Name(), n, c.Min, c.Max)
			}
			own := ids[indptr[b]:indptr[b+1]]
			if got := (len(own)-1)*16 + int(last[b]); got != n || last[b] < 1 || last[b] > 16 {
				t.Errorf("%s: sequence %d holds %d tokens (last page %d), want %d", s.Name(), b, got, last[b], n)
			}
			for _, p := range own {
				if p < 0 || p >= 40 || seen[p] {
					t.Errorf("%s: page %d outside the pool 0..39 or taken twice", s.Name(), p)
				}
				seen[p] = true
			}
			if pos[b] != int32(n-1) {
				t.Errorf("%s: sequence %d of %d tokens at position %d, want %d", s.Name(), b, n, pos[b], n-1)
			}
		}
		x := gpu.Decode(s.Host[0], l.Inputs[0].DType)
		if len(x) != 32*s.Batch {
			t.Errorf("%s: %d values of x, want %d", s.Name(), len(x), 32*s.Batch)
		}
		for _, v := range x {
			if !(v >= -1 && v <= 1) {
				t.Errorf("%s: x holds %v", s.Name(), v)
				break
			}
		}
	}
	again, err := l.Steps(paged, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, steps) {
		t.Error("the same seed drew other steps")
	}
	other, err := l.Steps(paged, 2)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(other, steps) {
		t.Error("another seed drew the same steps")
	}
}

// TestStepsLlama checks the contiguous target's one step: a sequence of
// T+S tokens whose new token is at position T.
func TestStepsLlama(t *testing.T) {
	llama, _ := targets(t)
	steps, err := layout(t, llama).Steps(llama, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 {
		t.Fatalf("%d steps, want 1", len(steps))
	}
	s := steps[0]
	if s.Name() != "batch=1" || s.Bucket != 1 || !slices.Equal(s.Lengths, []int{4097}) || len(s.Host[0]) != 8192 || !slices.Equal(int32s(s.Host[1]), []int32{4096}) {
		t.Errorf("step %s in bucket %d, lengths %v, %d bytes of x, positions %v", s.Name(), s.Bucket, s.Lengths, len(s.Host[0]), int32s(s.Host[1]))
	}
}

// TestHostPoolTooSmall checks that sequences the pool cannot hold are an
// error.
func TestHostPoolTooSmall(t *testing.T) {
	_, paged := targets(t)
	l := layout(t, paged)
	if _, err := l.Host(rand.New(rand.NewPCG(1, 2)), []int{65, 65, 65, 65, 65, 65, 65, 65, 65}); err == nil {
		t.Error("9 sequences of 5 pages from a pool of 40: no error")
	}
}
