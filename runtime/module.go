//go:build cuda

package runtime

// #include <cuda.h>
// static CUresult setMaxDynamicShared(CUfunction f, int bytes) {
//   return cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
// }
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// Module is code loaded into a context.
type Module struct{ m cu.Module }

// LoadModule loads PTX (JIT-compiled by the driver) or a cubin.
func (c *Context) LoadModule(image string) (*Module, error) {
	m, err := cu.LoadData(image)
	if err != nil {
		return nil, fmt.Errorf("runtime: load module: %w", err)
	}
	return &Module{m: m}, nil
}

// Unload releases the module.
func (m *Module) Unload() error {
	if err := m.m.Unload(); err != nil {
		return fmt.Errorf("runtime: unload module: %w", err)
	}
	return nil
}

// Global is the device variable name of the module (a global of its
// source, such as the timeline probes' fz_timeline): its address and
// size. The module owns it; the buffer must not be freed.
func (m *Module) Global(name string) (Buffer, error) {
	p, n, err := m.m.Global(name)
	if err != nil {
		return Buffer{}, fmt.Errorf("runtime: global %s: %w", name, err)
	}
	return Buffer{Ptr: DevicePtr(p), Bytes: n}, nil
}

// Kernel is an entry function of a module.
type Kernel struct {
	Name string
	fn   cu.Function
	// maxShared is the dynamic shared memory the kernel is allowed so far.
	maxShared int64
}

// defaultShared is the dynamic shared memory a kernel may use without
// opting in.
const defaultShared = 48 << 10

// Kernel looks up the entry function name.
func (m *Module) Kernel(name string) (*Kernel, error) {
	fn, err := m.m.Function(name)
	if err != nil {
		return nil, fmt.Errorf("runtime: kernel %s: %w", name, err)
	}
	return &Kernel{Name: name, fn: fn, maxShared: defaultShared}, nil
}

// allowShared opts the kernel in to bytes of dynamic shared memory when
// that is more than the default.
func (k *Kernel) allowShared(bytes int64) error {
	if bytes <= k.maxShared {
		return nil
	}
	// cu v0.9.6 has no cuFuncSetAttribute and no accessor for the handle;
	// a cu.Function is a struct of the one CUfunction.
	f := *(*C.CUfunction)(unsafe.Pointer(&k.fn))
	if r := C.setMaxDynamicShared(f, C.int(bytes)); r != C.CUDA_SUCCESS {
		return fmt.Errorf("runtime: kernel %s: allow %d bytes of shared memory: CUresult %d", k.Name, bytes, int(r))
	}
	k.maxShared = bytes
	return nil
}

// The handle cast in allowShared needs cu.Function to be exactly one
// CUfunction; these fail to compile otherwise.
var (
	_ [unsafe.Sizeof(cu.Function{}) - unsafe.Sizeof(C.CUfunction(nil))]struct{}
	_ [unsafe.Sizeof(C.CUfunction(nil)) - unsafe.Sizeof(cu.Function{})]struct{}
)
