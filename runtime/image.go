//go:build cuda

package runtime

// #include <stdlib.h>
// #include <cuda.h>
// static CUresult loadImage(CUmodule* m, const void* image) { return cuModuleLoadData(m, image); }
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// LoadImage loads a module from a cubin, a fatbin or NUL-terminated PTX held
// in image. (LoadModule goes through cu.LoadData, which copies its argument
// as a C string and so stops at the first NUL byte of a binary image.)
func (c *Context) LoadImage(image []byte) (*Module, error) {
	if len(image) == 0 {
		return nil, fmt.Errorf("runtime: load module: empty image")
	}
	buf := C.malloc(C.size_t(len(image) + 1))
	defer C.free(buf)
	dst := unsafe.Slice((*byte)(buf), len(image)+1)
	copy(dst, image)
	dst[len(image)] = 0
	var m cu.Module
	if r := C.loadImage((*C.CUmodule)(unsafe.Pointer(&m)), buf); r != C.CUDA_SUCCESS {
		return nil, check(C.CUresult(r), "load module")
	}
	return &Module{m: m}, nil
}

// The cast in LoadImage needs cu.Module to be exactly one CUmodule.
var (
	_ [unsafe.Sizeof(cu.Module{}) - unsafe.Sizeof(C.CUmodule(nil))]struct{}
	_ [unsafe.Sizeof(C.CUmodule(nil)) - unsafe.Sizeof(cu.Module{})]struct{}
)
