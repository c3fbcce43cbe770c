// Package golang emits the Go launch code of a kernel plan with
// github.com/dave/jennifer: one package per layer with a typed Layer (a
// device buffer per input, param, state and output, the static arena of
// intermediates, handed out by value so that none is rebound), New,
// Forward (every kernel entry launched in plan order with the grid of the
// launch plan and the parameters of the kernel ABI in package codegen),
// Capture (Forward as a CUDA graph per batch size) and the graph ladder:
// Ladder (a graph per batch bucket), Step (a step's inputs copied into the
// static buffers, padded to the bucket, one graph launch), Counts. What it
// needs of the CUDA side (entry names, parameters, block size) comes in as
// a Kernel per plan kernel. LayerNames gives the names the package declares
// for its dims and buffers to a program generated to call it
// (gpu/cmd/laddercheck). The generated package calls
// github.com/fuser-dev/fuser/runtime and, like it, builds only with the tag
// cuda.
package golang
