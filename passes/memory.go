package passes

import (
	"sort"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// arenaAlign is the alignment of every arena buffer: 256 bytes keeps 16-byte
// vector loads and TMA descriptors legal.
const arenaAlign = 256

// memory places every intermediate buffer (a kernel output that is neither a
// graph output, a KV cache nor a load-stage value the step reads) at a
// fixed offset of one arena, reusing the space of buffers whose last reader
// has run: first fit over live ranges.
func memory(s *State) (int, error) {
	p := s.Plan
	isOutput := map[*ir.Value]bool{}
	for _, o := range s.Graph.Outputs {
		isOutput[o] = true
	}
	for _, o := range p.Folded() {
		isOutput[o] = true // a buffer of its own, kept from load to every step
	}
	type buffer struct {
		v                 *ir.Value
		first, last, size int64
	}
	var bufs []*buffer
	byVal := map[*ir.Value]*buffer{}
	for i, k := range p.Kernels {
		for _, o := range k.Outputs {
			if isOutput[o] || plan.InCache(o) {
				continue
			}
			size, err := plan.Bytes(o, s.Dims)
			if err != nil {
				return 0, err
			}
			b := &buffer{v: o, first: int64(i), last: int64(i), size: (size + arenaAlign - 1) / arenaAlign * arenaAlign}
			bufs = append(bufs, b)
			byVal[o] = b
		}
		for _, in := range k.Inputs {
			if b := byVal[plan.Root(in)]; b != nil {
				b.last = int64(i)
			}
		}
	}
	arena := &plan.Arena{Offsets: map[*ir.Value]int64{}, Bytes: map[*ir.Value]int64{}}
	var placed []*buffer
	offset := map[*buffer]int64{}
	for _, b := range bufs {
		var busy [][2]int64
		for _, o := range placed {
			if o.first <= b.last && b.first <= o.last {
				busy = append(busy, [2]int64{offset[o], offset[o] + o.size})
			}
		}
		sort.Slice(busy, func(i, j int) bool { return busy[i][0] < busy[j][0] })
		at := int64(0)
		for _, r := range busy {
			if at+b.size <= r[0] {
				break
			}
			at = max(at, r[1])
		}
		offset[b] = at
		placed = append(placed, b)
		arena.Offsets[b.v], arena.Bytes[b.v] = at, b.size
		arena.Size = max(arena.Size, at+b.size)
	}
	p.Arena = arena
	return len(bufs), nil
}
