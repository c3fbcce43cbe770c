package laddercheck

import (
	"slices"
	"testing"
)

func TestElems(t *testing.T) {
	b := []byte{0x80, 0x3f, 0x00, 0xc0, 0x07}
	if got := Elems[uint16](b); !slices.Equal(got, []uint16{0x3f80, 0xc000}) {
		t.Errorf("Elems[uint16] = %#x, want bf16 1 and -2 (the odd byte dropped)", got)
	}
	if got := Elems[int32]([]byte{0xff, 0xff, 0xff, 0xff, 4, 0, 0, 0}); !slices.Equal(got, []int32{-1, 4}) {
		t.Errorf("Elems[int32] = %v, want -1, 4", got)
	}
	if got := Elems[uint16](nil); got != nil {
		t.Errorf("Elems(nil) = %v, want nil", got)
	}
	if got := Elems[int32]([]byte{1, 2}); got == nil || len(got) != 0 {
		t.Errorf("Elems of half an int32 = %v, want empty, not nil", got)
	}
	// A copy: the host bytes may change after.
	got := Elems[uint16](b)
	b[0] = 0
	if got[0] != 0x3f80 {
		t.Error("Elems shares the bytes' memory")
	}
}
