//go:build cuda

package runtime

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// DevicePtr is a device address, passed to kernels as a pointer argument.
type DevicePtr uintptr

// Buffer is one device allocation.
type Buffer struct {
	Ptr   DevicePtr
	Bytes int64
}

// Alloc allocates a zeroed buffer of the given size; a size of zero gives
// the empty buffer, with a null pointer.
func (c *Context) Alloc(bytes int64) (Buffer, error) {
	if bytes <= 0 {
		return Buffer{}, nil
	}
	p, err := cu.MemAlloc(bytes)
	if err != nil {
		return Buffer{}, fmt.Errorf("runtime: alloc %d bytes: %w", bytes, err)
	}
	if err := cu.MemsetD8(p, 0, bytes); err != nil {
		return Buffer{}, fmt.Errorf("runtime: zero %d bytes: %w", bytes, err)
	}
	return Buffer{Ptr: DevicePtr(p), Bytes: bytes}, nil
}

// At is the address off bytes into the buffer.
func (b Buffer) At(off int64) DevicePtr { return b.Ptr + DevicePtr(off) }

// Free releases the buffer and empties b.
func (b *Buffer) Free() error {
	if b.Ptr == 0 {
		return nil
	}
	if err := cu.MemFree(cu.DevicePtr(b.Ptr)); err != nil {
		return fmt.Errorf("runtime: free: %w", err)
	}
	*b = Buffer{}
	return nil
}

// CopyIn copies src to the start of the buffer.
func (b Buffer) CopyIn(src []byte) error {
	if int64(len(src)) > b.Bytes {
		return fmt.Errorf("runtime: copy of %d bytes into a %d-byte buffer", len(src), b.Bytes)
	}
	if len(src) == 0 {
		return nil
	}
	if err := cu.MemcpyHtoD(cu.DevicePtr(b.Ptr), unsafe.Pointer(&src[0]), int64(len(src))); err != nil {
		return fmt.Errorf("runtime: copy to device: %w", err)
	}
	return nil
}

// CopyOut copies the start of the buffer into dst.
func (b Buffer) CopyOut(dst []byte) error {
	if int64(len(dst)) > b.Bytes {
		return fmt.Errorf("runtime: copy of %d bytes out of a %d-byte buffer", len(dst), b.Bytes)
	}
	if len(dst) == 0 {
		return nil
	}
	if err := cu.MemcpyDtoH(unsafe.Pointer(&dst[0]), cu.DevicePtr(b.Ptr), int64(len(dst))); err != nil {
		return fmt.Errorf("runtime: copy from device: %w", err)
	}
	return nil
}
