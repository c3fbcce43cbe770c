package laddercheck

import (
	"unsafe"

	"github.com/fuser-dev/fuser/runtime"
)

// Elems copies b, little-endian as the device's memory, into a new slice
// of T: a field of a generated StepInputs, which the generated main fills
// from the check's host bytes. A trailing partial element is dropped; nil
// stays nil (an input left out).
func Elems[T runtime.Element](b []byte) []T {
	if b == nil {
		return nil
	}
	var zero T
	out := make([]T, len(b)/int(unsafe.Sizeof(zero)))
	copy(runtime.AsBytes(out), b)
	return out
}
