//go:build cuda

package runtime

// #include <cuda.h>
// static CUresult launchDependent(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned block, unsigned shared,
//                                 CUstream s, unsigned long long* vals, int n) {
//   void* args[64];
//   if (n > 64) return CUDA_ERROR_INVALID_VALUE;
//   for (int i = 0; i < n; i++) args[i] = &vals[i];
//   CUlaunchAttribute attr;
//   attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
//   attr.value.programmaticStreamSerializationAllowed = 1;
//   CUlaunchConfig cfg = {0};
//   cfg.gridDimX = gx; cfg.gridDimY = gy; cfg.gridDimZ = gz;
//   cfg.blockDimX = block; cfg.blockDimY = 1; cfg.blockDimZ = 1;
//   cfg.sharedMemBytes = shared;
//   cfg.hStream = s;
//   cfg.attrs = &attr;
//   cfg.numAttrs = 1;
//   return cuLaunchKernelEx(&cfg, f, args, 0);
// }
import "C"

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
	return launch(k, grid, block, shared, s, false, args)
}

// LaunchDependent is Launch as a programmatic dependent of the kernel
// before it on s (sm_90; in a captured graph too): it may start while that
// kernel finishes. The kernel must wait for it (griddepcontrol.wait, as
// every generated kernel does) before it touches memory.
func LaunchDependent(k *Kernel, grid [3]int64, block int, shared int64, s *Stream, args ...any) error {
	return launch(k, grid, block, shared, s, true, args)
}

func launch(k *Kernel, grid [3]int64, block int, shared int64, s *Stream, dependent bool, args []any) error {
	if grid[0] < 1 || grid[0] > math.MaxInt32 || grid[1] < 1 || grid[1] > 65535 || grid[2] < 1 || grid[2] > 65535 {
		return fmt.Errorf("runtime: launch %s: grid (%d,%d,%d) out of range", k.Name, grid[0], grid[1], grid[2])
	}
	if block < 1 || block > 1024 {
		return fmt.Errorf("runtime: launch %s: block of %d threads", k.Name, block)
	}
	if len(args) > 64 {
		return fmt.Errorf("runtime: launch %s: %d arguments, at most 64", k.Name, len(args))
	}
	if err := k.allowShared(shared); err != nil {
		return err
	}
	// Every argument goes in a 64-bit slot: cu copies 8 bytes per argument.
	vals := make([]uint64, len(args)+1)
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
	var err error
	if dependent {
		f := *(*C.CUfunction)(unsafe.Pointer(&k.fn))
		r := C.launchDependent(f, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]), C.uint(block), C.uint(shared), s.c(),
			(*C.ulonglong)(unsafe.Pointer(&vals[0])), C.int(len(args)))
		err = check(r, "launch dependent")
	} else {
		err = k.fn.Launch(int(grid[0]), int(grid[1]), int(grid[2]), block, 1, 1, int(shared), s.s, ptrs)
	}
	if err != nil {
		return fmt.Errorf("runtime: launch %s grid(%d,%d,%d) block %d shared %d: %w", k.Name, grid[0], grid[1], grid[2], block, shared, err)
	}
	s.launched()
	return nil
}
