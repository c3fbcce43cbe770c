//go:build cuda

package runtime

// #include <cuda.h>
// static CUresult launchEx(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned block, unsigned shared,
//                          CUstream s, const unsigned long long* vals, const int* words, int n, int dependent,
//                          unsigned cluster) {
//   // The arguments laid out again with each tensor map (16 words) 64-byte
//   // aligned, as its type is.
//   unsigned long long buf[64 * 24] __attribute__((aligned(64)));
//   void* args[64];
//   if (n > 64) return CUDA_ERROR_INVALID_VALUE;
//   for (int i = 0, src = 0, dst = 0; i < n; i++) {
//     if (words[i] > 1) dst = (dst + 7) & ~7;
//     for (int w = 0; w < words[i]; w++) buf[dst + w] = vals[src + w];
//     args[i] = &buf[dst];
//     src += words[i];
//     dst += words[i];
//   }
//   CUlaunchAttribute attrs[2];
//   unsigned na = 0;
//   if (dependent) {
//     attrs[na].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
//     attrs[na].value.programmaticStreamSerializationAllowed = 1;
//     na++;
//   }
//   if (cluster > 1) {
//     attrs[na].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
//     attrs[na].value.clusterDim.x = cluster;
//     attrs[na].value.clusterDim.y = 1;
//     attrs[na].value.clusterDim.z = 1;
//     na++;
//   }
//   CUlaunchConfig cfg = {0};
//   cfg.gridDimX = gx; cfg.gridDimY = gy; cfg.gridDimZ = gz;
//   cfg.blockDimX = block; cfg.blockDimY = 1; cfg.blockDimZ = 1;
//   cfg.sharedMemBytes = shared;
//   cfg.hStream = s;
//   cfg.attrs = attrs;
//   cfg.numAttrs = na;
//   return cuLaunchKernelEx(&cfg, f, n > 0 ? args : 0, 0);
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
// DevicePtr, an int64, an int32, a float32 or a TensorMap, passed by value
// in order.
func Launch(k *Kernel, grid [3]int64, block int, shared int64, s *Stream, args ...any) error {
	return LaunchWith(k, grid, block, shared, LaunchOpts{}, s, args...)
}

// LaunchDependent is Launch as a programmatic dependent of the kernel
// before it on s (sm_90; in a captured graph too): it may start while that
// kernel finishes. The kernel must wait for it (griddepcontrol.wait, as
// every generated kernel does) before it touches memory.
func LaunchDependent(k *Kernel, grid [3]int64, block int, shared int64, s *Stream, args ...any) error {
	return LaunchWith(k, grid, block, shared, LaunchOpts{Dependent: true}, s, args...)
}

// LaunchOpts are a launch's attributes besides its shape.
type LaunchOpts struct {
	// Dependent: a programmatic dependent of the kernel before it on the
	// stream (LaunchDependent).
	Dependent bool
	// Cluster is the blocks of a thread-block cluster along x (sm_90),
	// which grid[0] must be a multiple of; 0 or 1 for none.
	Cluster int
}

// LaunchWith is Launch with the attributes of opts.
func LaunchWith(k *Kernel, grid [3]int64, block int, shared int64, opts LaunchOpts, s *Stream, args ...any) error {
	if opts.Cluster > 1 && (opts.Cluster > 8 || grid[0]%int64(opts.Cluster) != 0) {
		return fmt.Errorf("runtime: launch %s: grid (%d,%d,%d) in clusters of %d blocks", k.Name, grid[0], grid[1], grid[2], opts.Cluster)
	}
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
	// Every argument but a tensor map is one 64-bit word, a map 16 (the
	// driver copies each parameter's own size from its address).
	vals := make([]uint64, 0, len(args)+1)
	words := make([]C.int, len(args)+1)
	for i, a := range args {
		n := len(vals)
		switch a := a.(type) {
		case DevicePtr:
			vals = append(vals, uint64(a))
		case int64:
			vals = append(vals, uint64(a))
		case int32:
			vals = append(vals, uint64(uint32(a)))
		case float32:
			vals = append(vals, uint64(math.Float32bits(a)))
		case TensorMap:
			vals = append(vals, a[:]...)
		default:
			return fmt.Errorf("runtime: launch %s: argument %d has unsupported type %T", k.Name, i, a)
		}
		words[i] = C.int(len(vals) - n)
	}
	vals = append(vals, 0)
	f := *(*C.CUfunction)(unsafe.Pointer(&k.fn))
	dep := C.int(0)
	if opts.Dependent {
		dep = 1
	}
	r := C.launchEx(f, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]), C.uint(block), C.uint(shared), s.c(),
		(*C.ulonglong)(unsafe.Pointer(&vals[0])), &words[0], C.int(len(args)), dep, C.uint(max(opts.Cluster, 1)))
	err := check(r, "launch")
	if err != nil {
		return fmt.Errorf("runtime: launch %s grid(%d,%d,%d) block %d shared %d: %w", k.Name, grid[0], grid[1], grid[2], block, shared, err)
	}
	s.launched()
	return nil
}
