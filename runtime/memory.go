//go:build cuda

package runtime

// #include <cuda.h>
// static CUresult copyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { return cuMemcpyDtoDAsync(dst, src, n, s); }
// static CUresult memsetAsync(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) { return cuMemsetD8Async(dst, v, n, s); }
// static const char* errorText(CUresult r) { const char* s = 0; if (cuGetErrorString(r, &s) != CUDA_SUCCESS || !s) return "unknown CUDA error"; return s; }
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// errorText is the driver's description of r.
func errorText(r C.CUresult) string { return C.GoString(C.errorText(r)) }

// inRange checks off and n against the buffer.
func (b Buffer) inRange(off, n int64, what string) error {
	if off < 0 || n < 0 || off+n > b.Bytes {
		return fmt.Errorf("runtime: %s of bytes [%d, %d) of a %d-byte buffer", what, off, off+n, b.Bytes)
	}
	return nil
}

// Memset sets n bytes from off to v (synchronously).
func (b Buffer) Memset(off, n int64, v byte) error {
	if err := b.inRange(off, n, "memset"); err != nil || n == 0 {
		return err
	}
	if err := cu.MemsetD8(cu.DevicePtr(b.At(off)), v, n); err != nil {
		return fmt.Errorf("runtime: memset: %w", err)
	}
	return nil
}

// CopyInAt copies src into the buffer at off.
func (b Buffer) CopyInAt(off int64, src []byte) error {
	if err := b.inRange(off, int64(len(src)), "copy in"); err != nil || len(src) == 0 {
		return err
	}
	if err := cu.MemcpyHtoD(cu.DevicePtr(b.At(off)), unsafe.Pointer(&src[0]), int64(len(src))); err != nil {
		return fmt.Errorf("runtime: copy to device: %w", err)
	}
	return nil
}

// CopyOutAt copies len(dst) bytes from off into dst.
func (b Buffer) CopyOutAt(off int64, dst []byte) error {
	if err := b.inRange(off, int64(len(dst)), "copy out"); err != nil || len(dst) == 0 {
		return err
	}
	if err := cu.MemcpyDtoH(unsafe.Pointer(&dst[0]), cu.DevicePtr(b.At(off)), int64(len(dst))); err != nil {
		return fmt.Errorf("runtime: copy from device: %w", err)
	}
	return nil
}

// CopyDtoD copies n bytes between device addresses, enqueued on s.
func CopyDtoD(dst, src DevicePtr, n int64, s *Stream) error {
	s.counts.Copies++
	return check(C.copyDtoDAsync(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), s.c()), "copy on device")
}

// MemsetAsync sets n bytes at p to v, enqueued on s.
func MemsetAsync(p DevicePtr, v byte, n int64, s *Stream) error {
	s.counts.Copies++
	return check(C.memsetAsync(C.CUdeviceptr(p), C.uchar(v), C.size_t(n), s.c()), "memset")
}

// Event is a CUDA event that records timing.
type Event struct{ e cu.Event }

// NewEvent makes a timing event.
func (c *Context) NewEvent() (*Event, error) {
	e, err := cu.MakeEvent(cu.DefaultEvent)
	if err != nil {
		return nil, fmt.Errorf("runtime: make event: %w", err)
	}
	return &Event{e: e}, nil
}

// Record enqueues the event on s.
func (e *Event) Record(s *Stream) error {
	if err := e.e.Record(s.s); err != nil {
		return fmt.Errorf("runtime: record event: %w", err)
	}
	return nil
}

// Synchronize waits for the event.
func (e *Event) Synchronize() error {
	if err := e.e.Synchronize(); err != nil {
		return fmt.Errorf("runtime: synchronize event: %w", err)
	}
	return nil
}

// Elapsed is the time in milliseconds from start to end, both completed.
func Elapsed(start, end *Event) (float64, error) {
	ms, err := start.e.Elapsed(end.e)
	if err != nil {
		return 0, fmt.Errorf("runtime: elapsed time: %w", err)
	}
	return ms, nil
}

// Destroy releases the event.
func (e *Event) Destroy() error {
	if err := cu.DestroyEvent(&e.e); err != nil {
		return fmt.Errorf("runtime: destroy event: %w", err)
	}
	return nil
}

// DeviceInfo describes the context's device.
type DeviceInfo struct {
	Name            string `json:"name"`
	SMs             int    `json:"sms"`
	L2Bytes         int64  `json:"l2_bytes"`
	MemoryBytes     int64  `json:"memory_bytes"`
	ComputeCapMajor int    `json:"cc_major"`
	ComputeCapMinor int    `json:"cc_minor"`
	ClockKHz        int    `json:"clock_khz"`
	MemoryClockKHz  int    `json:"memory_clock_khz"`
	MemoryBusBits   int    `json:"memory_bus_bits"`
	// SharedPerSM is an SM's shared memory, SharedPerBlock the most a
	// block may opt in to (bytes); RegistersPerSM an SM's 32-bit registers.
	SharedPerSM    int `json:"shared_per_sm"`
	SharedPerBlock int `json:"shared_per_block"`
	RegistersPerSM int `json:"registers_per_sm"`
}

// maxSharedPerBlockOptin is the attribute gorgonia.org/cu v0.9.6 does not
// name: the shared memory a block may opt in to.
const maxSharedPerBlockOptin = cu.DeviceAttribute(C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)

// Info describes the device.
func (c *Context) Info() (DeviceInfo, error) {
	var d DeviceInfo
	var err error
	if d.Name, err = c.dev.Name(); err != nil {
		return d, fmt.Errorf("runtime: device name: %w", err)
	}
	if d.MemoryBytes, err = c.dev.TotalMem(); err != nil {
		return d, fmt.Errorf("runtime: device memory: %w", err)
	}
	for _, a := range []struct {
		attr cu.DeviceAttribute
		dst  *int
	}{
		{cu.MultiprocessorCount, &d.SMs}, {cu.ComputeCapabilityMajor, &d.ComputeCapMajor},
		{cu.ComputeCapabilityMinor, &d.ComputeCapMinor}, {cu.ClockRate, &d.ClockKHz},
		{cu.MemoryClockRate, &d.MemoryClockKHz}, {cu.GlobalMemoryBusWidth, &d.MemoryBusBits},
		{cu.MaxSharedMemoryPerMultiprocessor, &d.SharedPerSM}, {maxSharedPerBlockOptin, &d.SharedPerBlock},
		{cu.MaxRegistersPerMultiprocessor, &d.RegistersPerSM},
	} {
		if *a.dst, err = c.dev.Attribute(a.attr); err != nil {
			return d, fmt.Errorf("runtime: device attribute: %w", err)
		}
	}
	l2, err := c.dev.Attribute(cu.L2CacheSize)
	if err != nil {
		return d, fmt.Errorf("runtime: device attribute: %w", err)
	}
	d.L2Bytes = int64(l2)
	return d, nil
}
