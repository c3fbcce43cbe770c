// Package cuda generates CUDA C++ for a kernel plan: one self-contained
// translation unit (no #include; its own bf16/f16/fp8 conversions, math and
// reductions) with an extern "C" entry per plan kernel, named after it.
//
// Kernel bodies are generated from the ops of each kernel: the element-wise
// op tree of Row and Copy kernels (vectorised 16-byte loads and stores with
// a scalar path for any other access), a Row kernel's chain of row
// reductions, one pass over the row each (warp shuffles and a
// shared-memory block reduction), reductions over other axes, KV-cache
// appends, GEMMs with their epilogue inserted in the store phase (a GEMV
// path with split-K for up to 64 rows: CUDA cores for one row (in the
// launch's narrow tiles where it has them, K unsplit), above that
// tensor cores over a cp.async ring of the weight, read once: wgmma where
// the launch says so (Launch.WGMMA, sm_90a), mma.sync otherwise;
// a tensor-core path for more: the wgmma GEMM where the launch says so,
// fed by the tensor copy engine where its operands allow, the mma.sync
// tiles with ldmatrix and a cp.async pipeline otherwise), and flash
// attention (split-KV decode with GQA packing and a log-sum-exp merge;
// tiled prefill, on wgmma where the launch says so, its key tiles by the
// tensor copy engine where they lie row after row, mma.sync otherwise).
// Every kernel reads its operands through the views of the graph (split
// parts, reshapes, transposes, broadcasts) and KV caches through their
// layout (contiguous, paged, ragged).
//
// Conventions the launcher relies on:
//   - Parameters follow the codegen ABI (codegen.Params): input pointers,
//     output pointers, then one int64 per graph dim. Kernels reading a paged
//     or ragged cache also take the layout's i32 inputs (added to the
//     inputs when the plan did not list them; see Kernel.Params).
//   - Sizes come from the dim parameters at run time; the graph's constants
//     are baked in. Every entry strides over its work, so any grid is
//     correct; Kernel.Block threads per block are required.
//   - A contiguous KV cache appended to is stored [2, B, G, T+S, Dh]: room
//     for the T cached tokens and the S new ones of each (sequence, head).
//     Paged and ragged caches follow LANGUAGE.md: the page table describes
//     the cache after the step's append.
//   - Split-KV decode partials go to fz_workspace, a module-level scratch
//     sized for the plan's launch (split count from the grid); the
//     tensor-core kernel merges them in its own launch, the CUDA-core one
//     in a second entry ("_merge"). Cascade decode attention launches its
//     prefix pass ("_prefix") first, whose partials the decode entry
//     merges. A split-K GEMV keeps its partials and tile arrival counters
//     in arrays of its own body; the splits of a tile wait for each other
//     (fz_split_join: the grid is resident at once) and each sums a share.
//     A kernel of another stream running beside it could hold the SMs its
//     waiting blocks need: the step's kernels run on one stream.
//   - Pointers must be 16-byte aligned for the vector paths to be taken;
//     any alignment is correct.
//   - A GEMV launch of more than one row takes plan.GemvSharedBytes of
//     dynamic shared memory (Launch.SharedBytes), a wgmma GEMM launch
//     plan.GemmWGSharedBytes; a GEMM body takes its wgmma path only when
//     launched with that much, and its mma.sync tiles then stage in it.
//   - Every entry calls fz_grid_sync before it touches memory the step
//     writes: launched as a programmatic dependent (Launch.Dependent) it
//     waits there for the kernel before it, and lets the next one start.
//     Before it, a GEMV asks L2 for its first weight rows and the decode
//     attention for its first keys and values, and both touch the module
//     globals they use (fz_warm), whose addresses come from a constant
//     bank in memory.
//
// The generic device code is CUDA under device/ (*.cuh), embedded and
// pasted into the module in the order device.go lists; the generators
// write per-kernel code and instantiate its templates with a context type
// per body (@BODY@_ctx: its parameters, and for attention its addressing
// and modifiers, for a matmul its operands' dtypes, layouts and
// addressing, which the GEMV tile of gemv.cuh reads). Identical kernel
// bodies (same code up to parameter names) are emitted once; each kernel's
// entries call the shared body. Kernel.Hash is the body's content hash.
package cuda
