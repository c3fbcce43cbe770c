//go:build nvrtc

package nvrtc

// #cgo LDFLAGS: -lnvrtc
// #include <stdlib.h>
// #include <nvrtc.h>
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"unsafe"
)

// Compile compiles one CUDA C++ translation unit named name (the name shows
// in diagnostics) for arch: a virtual architecture (compute_90a) gives PTX,
// a real one (sm_90a) PTX, a cubin and the ptxas report. The source must
// be self-contained: no include path is given. A failed compilation returns
// an error that carries NVRTC's log.
func Compile(src, name, arch string) (*Result, error) {
	opts := []string{"--gpu-architecture=" + arch, "-std=c++17"}
	if IsRealArch(arch) {
		opts = append(opts, "--ptxas-options=--verbose")
	}
	p, err := newProgram(src, name)
	if err != nil {
		return nil, err
	}
	defer p.destroy()
	res := &Result{}
	compileErr := p.compile(opts)
	res.Log = p.log()
	if compileErr != nil {
		return nil, &Error{Name: name, Arch: arch, Err: compileErr, Log: res.Log}
	}
	if res.PTX, err = p.ptx(); err != nil {
		return nil, fmt.Errorf("nvrtc %s: %w", name, err)
	}
	if IsRealArch(arch) {
		if res.CUBIN, err = p.cubin(); err != nil {
			return nil, fmt.Errorf("nvrtc %s: %w", name, err)
		}
		if res.Kernels, err = ParsePtxasInfo(res.Log); err != nil {
			return nil, fmt.Errorf("nvrtc %s: %w", name, err)
		}
	}
	return res, nil
}

// Version returns the NVRTC version, such as 12 and 4.
func Version() (major, minor int, err error) {
	var ma, mi C.int
	if err := check(C.nvrtcVersion(&ma, &mi)); err != nil {
		return 0, 0, fmt.Errorf("nvrtc version: %w", err)
	}
	return int(ma), int(mi), nil
}

type program struct{ p C.nvrtcProgram }

func newProgram(src, name string) (*program, error) {
	csrc, cname := C.CString(src), C.CString(name)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	p := &program{}
	if err := check(C.nvrtcCreateProgram(&p.p, csrc, cname, 0, nil, nil)); err != nil {
		return nil, fmt.Errorf("nvrtc create %s: %w", name, err)
	}
	return p, nil
}

func (p *program) destroy() { C.nvrtcDestroyProgram(&p.p) }

func (p *program) compile(opts []string) error {
	copts := C.malloc(C.size_t(len(opts)) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(copts)
	list := unsafe.Slice((**C.char)(copts), len(opts))
	for i, o := range opts {
		list[i] = C.CString(o)
		defer C.free(unsafe.Pointer(list[i]))
	}
	return check(C.nvrtcCompileProgram(p.p, C.int(len(opts)), (**C.char)(copts)))
}

func (p *program) log() string {
	var n C.size_t
	if C.nvrtcGetProgramLogSize(p.p, &n) != C.NVRTC_SUCCESS || n == 0 {
		return ""
	}
	buf := make([]byte, n)
	if C.nvrtcGetProgramLog(p.p, (*C.char)(unsafe.Pointer(&buf[0]))) != C.NVRTC_SUCCESS {
		return ""
	}
	return string(bytes.TrimRight(buf, "\x00"))
}

func (p *program) ptx() ([]byte, error) {
	var n C.size_t
	if err := check(C.nvrtcGetPTXSize(p.p, &n)); err != nil {
		return nil, fmt.Errorf("PTX size: %w", err)
	}
	buf := make([]byte, n)
	if n == 0 {
		return buf, nil
	}
	if err := check(C.nvrtcGetPTX(p.p, (*C.char)(unsafe.Pointer(&buf[0])))); err != nil {
		return nil, fmt.Errorf("PTX: %w", err)
	}
	return bytes.TrimRight(buf, "\x00"), nil
}

func (p *program) cubin() ([]byte, error) {
	var n C.size_t
	if err := check(C.nvrtcGetCUBINSize(p.p, &n)); err != nil {
		return nil, fmt.Errorf("cubin size: %w", err)
	}
	if n == 0 {
		return nil, errors.New("empty cubin")
	}
	buf := make([]byte, n)
	if err := check(C.nvrtcGetCUBIN(p.p, (*C.char)(unsafe.Pointer(&buf[0])))); err != nil {
		return nil, fmt.Errorf("cubin: %w", err)
	}
	return buf, nil
}

func check(r C.nvrtcResult) error {
	if r == C.NVRTC_SUCCESS {
		return nil
	}
	return errors.New(C.GoString(C.nvrtcGetErrorString(r)))
}
