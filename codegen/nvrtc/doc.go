// Package nvrtc compiles generated CUDA C++ with NVIDIA's runtime compiler,
// NVRTC, on a machine without a GPU: PTX always, a cubin too when the target
// is a real architecture (sm_90a), and the ptxas report per kernel
// (registers, shared memory, stack frame, spills) parsed from
// --ptxas-options=--verbose.
//
// Compile needs cgo, nvrtc.h and libnvrtc, so it is built only with the
// build tag nvrtc (see scripts/cuda-sdk.sh for the flags); without the tag it
// returns ErrUnavailable. The result types and the ptxas log parser are plain
// Go and always built.
package nvrtc

import "errors"

// ErrUnavailable is returned by Compile in a build without the nvrtc tag.
var ErrUnavailable = errors.New("nvrtc: not built in (build with -tags nvrtc and the flags from scripts/cuda-sdk.sh)")

// Result is what one compilation produced.
type Result struct {
	// PTX is the program's PTX, NUL-free.
	PTX []byte
	// CUBIN is the machine code; nil unless the arch was a real sm_XX.
	CUBIN []byte
	// Log is NVRTC's log: warnings, and the ptxas report for a real arch.
	Log string
	// Kernels is the ptxas report of every entry function, in log order;
	// empty unless the arch was a real sm_XX.
	Kernels []KernelInfo
}

// Kernel returns the ptxas report of the entry function name.
func (r *Result) Kernel(name string) (KernelInfo, bool) {
	for _, k := range r.Kernels {
		if k.Name == name {
			return k, true
		}
	}
	return KernelInfo{}, false
}

// IsRealArch reports whether arch names a real GPU architecture (sm_90a),
// for which NVRTC runs ptxas and emits a cubin, rather than a virtual one
// (compute_90a) for which it stops at PTX.
func IsRealArch(arch string) bool {
	return len(arch) > 3 && arch[:3] == "sm_"
}
