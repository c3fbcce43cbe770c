//go:build cuda

package runtime

import (
	"fmt"
	"math"
	"unsafe"
)

// Launch enqueues kernel k on stream s with a grid of blocks of block
// threads (one-dimensional blocks) and shared bytes of dynamic shared memory,
// opting the kernel in to more than 48 KiB when needed. Each argument is a
// DevicePtr, an int64, an int32 or a float32, passed by value in order.
func Launch(k *Kernel, grid [3]int64, block int, shared int64, s *Stream, args ...any) error {
	if grid[0] < 1 || grid[0] > math.MaxInt32 || grid[1] < 1 || grid[1] > 65535 || grid[2] < 1 || grid[2] > 65535 {
		return fmt.Errorf("runtime: launch %s: grid (%d,%d,%d) out of range", k.Name, grid[0], grid[1], grid[2])
	}
	if block < 1 || block > 1024 {
		return fmt.Errorf("runtime: launch %s: block of %d threads", k.Name, block)
	}
	if err := k.allowShared(shared); err != nil {
		return err
	}
	// Every argument goes in a 64-bit slot: cu copies 8 bytes per argument.
	vals := make([]uint64, len(args))
	ptrs := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case DevicePtr:
			vals[i] = uint64(a)
		case int64:
			vals[i] = uint64(a)
		case int32:
			vals[i] = uint64(uint32(a))
		case float32:
			vals[i] = uint64(math.Float32bits(a))
		default:
			return fmt.Errorf("runtime: launch %s: argument %d has unsupported type %T", k.Name, i, a)
		}
		ptrs[i] = unsafe.Pointer(&vals[i])
	}
	if err := k.fn.Launch(int(grid[0]), int(grid[1]), int(grid[2]), block, 1, 1, int(shared), s.s, ptrs); err != nil {
		return fmt.Errorf("runtime: launch %s grid(%d,%d,%d) block %d shared %d: %w", k.Name, grid[0], grid[1], grid[2], block, shared, err)
	}
	s.launched()
	return nil
}
