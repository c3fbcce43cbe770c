package plan

import "github.com/fuser-dev/fuser/ir"

// Arena is the static memory plan at bound dims: every intermediate buffer
// (a kernel output that is not a graph output or a cache) at a fixed offset
// in one allocation, so a captured CUDA graph never sees a new address.
type Arena struct {
	Size    int64
	Offsets map[*ir.Value]int64
	// Bytes is each buffer's size.
	Bytes map[*ir.Value]int64
}
