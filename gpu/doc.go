// Package gpu checks and measures generated plans on the GPU: the on-device
// correctness suite (suite_test.go, build tag cuda), the deterministic
// decode's test (determinism_test.go, tag cuda) and the measurements behind
// `fuser bench` and `fuser profile`
// (benchrun.go, profile.go, tag cuda), over what they share and what needs
// no GPU (untagged, tested by make test on the CPU):
//
//   - cases.go: the suite's cases, drawn from a seed: every embedded spec
//     with its model constants shrunk as interp's tests shrink them, the
//     attention layers of those tests (ragged and paged caches among them),
//     and Llama-3-8B at full size.
//   - prepare.go: a plan at bound dims with one CUDA module per kernel
//     (codegen/cuda), so that a kernel the generator refuses is skipped with
//     its error while the others run, and identical kernels share a compiled
//     image.
//   - images.go: the compiled images. The GPU machine has no NVRTC 12 and no
//     Go, so make gpu-bundle compiles every module here
//     (cmd/gpukernels, NVRTC, sm_90a cubins) and ships them; a source not in
//     the bundle is compiled there with nvcc when it has one.
//   - layout.go, hostdata.go: device memory laid out as codegen/golang's
//     launch packages lay it out, the reference values in device formats,
//     and which elements of a ragged value exist.
//   - tolerance.go: the thresholds, and why.
//   - bench.go: the bench targets, the ceilings' kernels (an 8192³ GEMM
//     plan, a register-only mma.sync loop) and the kernel that holds the
//     stream while timed launches queue.
//   - determinism.go: the plans and inputs of the deterministic decode's
//     test.
//   - refcheck.go: the external-reference check's cases (RefCases) and
//     files: each case's exported PyTorch program, inputs and our results
//     in safetensors, for bench/refcheck.py; refrun.go (cuda) runs a step
//     for gpu/cmd/refdump.
//   - device.go (cuda): loading a plan's kernels, buffers, launches.
//
// Beside the suite, what a user runs is checked through the Go packages
// `fuser build` generates, not through this package's launches: the
// CUDA-graph ladder by package laddercheck (each generated package's New,
// InitRandom, Ladder, Step and Forward; it replaced the ladder tests here,
// which drove runtime.Ladder over the suite's buffers with a copy of the
// generated forward), the step's time by package layerstep.
// gpu/cmd/laddercheck and gpu/cmd/layerstep generate their programs;
// run.sh runs them.
//
// The suite is a package of its own rather than runtime's tests because it
// depends on the planner, the code generator and the interpreter, which the
// runtime (what generated packages import) must not.
package gpu
