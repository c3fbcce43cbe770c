//go:build nvrtc

package cuda

// The NVRTC helper of the nvrtc-tagged tests (cgo cannot live in _test
// files). It is built only with the tag.

// #cgo LDFLAGS: -lnvrtc
// #include <stdlib.h>
// #include <nvrtc.h>
import "C"

import (
	"fmt"
	"unsafe"
)

// compileNVRTC compiles src for arch with ptxas verbose output and returns
// the log and the cubin.
func compileNVRTC(src, name, arch string) (log string, cubin []byte, err error) {
	csrc, cname := C.CString(src), C.CString(name)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	var prog C.nvrtcProgram
	if r := C.nvrtcCreateProgram(&prog, csrc, cname, 0, nil, nil); r != C.NVRTC_SUCCESS {
		return "", nil, fmt.Errorf("nvrtcCreateProgram: %s", C.GoString(C.nvrtcGetErrorString(r)))
	}
	defer C.nvrtcDestroyProgram(&prog)
	opts := []string{"--gpu-architecture=" + arch, "--ptxas-options=--verbose", "-std=c++17"}
	copts := make([]*C.char, len(opts))
	for i, o := range opts {
		copts[i] = C.CString(o)
		defer C.free(unsafe.Pointer(copts[i]))
	}
	r := C.nvrtcCompileProgram(prog, C.int(len(opts)), &copts[0])
	var n C.size_t
	C.nvrtcGetProgramLogSize(prog, &n)
	buf := make([]byte, n)
	if n > 0 {
		C.nvrtcGetProgramLog(prog, (*C.char)(unsafe.Pointer(&buf[0])))
	}
	log = string(buf)
	if r != C.NVRTC_SUCCESS {
		return log, nil, fmt.Errorf("nvrtcCompileProgram: %s", C.GoString(C.nvrtcGetErrorString(r)))
	}
	var cn C.size_t
	if C.nvrtcGetCUBINSize(prog, &cn) == C.NVRTC_SUCCESS && cn > 0 {
		cubin = make([]byte, cn)
		C.nvrtcGetCUBIN(prog, (*C.char)(unsafe.Pointer(&cubin[0])))
	}
	return log, cubin, nil
}
