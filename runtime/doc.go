// Package runtime runs generated layers on the GPU through the CUDA driver
// API (gorgonia.org/cu plus a small cgo shim for launches, tensor maps and
// CUDA graphs): a context on a locked OS thread, modules loaded from PTX,
// device buffers, kernel launches counted per stream (Stream.Counts), the
// tensor maps kernels copy through (RowMap), stream capture into CUDA
// graphs, and the graph ladder (Ladder): one graph per batch bucket, a step
// copying its inputs into the static buffers, padding them to the bucket
// and replaying the bucket's graph in one launch.
//
// Everything but the ladder's bucket choice and staging (ladder.go, plain
// Go, tested without a GPU) needs cgo and cuda.h, so it is built only with
// the build tag cuda (see scripts/cuda-sdk.sh for the flags); binaries link
// libcuda.so.1, which the GPU driver provides.
package runtime
