// Package runtime runs generated layers on the GPU through the CUDA driver
// API (gorgonia.org/cu plus a small cgo shim for CUDA graphs): a context on a
// locked OS thread, modules loaded from PTX, device buffers, kernel launches
// and stream capture into CUDA graphs.
//
// Everything but this comment needs cgo and cuda.h, so it is built only with
// the build tag cuda (see scripts/cuda-sdk.sh for the flags); binaries link
// libcuda.so.1, which the GPU driver provides. This is the minimal API the
// packages from codegen/golang call; the arena ladder and replay helpers
// come later.
package runtime
