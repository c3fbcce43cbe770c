// Package interp is the CPU reference interpreter of fuser's IR: it runs an
// ir.Graph on concrete tensors, element by element in float64, and is the
// oracle every generated kernel is compared against. RunPlan runs a kernel
// plan the same way, kernel by kernel with each kernel's algorithm, which is
// why the package sits above plan rather than inside ir.
//
// Values are computed exactly as LANGUAGE.md and ir/infer.go define the ops
// (the fused ir.OpAttention included). Tensors hold float64 in row-major
// order whatever their declared dtype; Options.Round emulates the declared
// dtypes by rounding every result (see Round).
//
// Variable-length (ragged) values: positions past a sequence's length do not
// exist. Reductions, softmax, topk and matmul contractions skip them, masks
// use the per-sequence key count, and every result stores 0 there, so no
// data from unused cache slots can leak into a result.
//
// State leaves are given in their physical layout (see Run) and seen by the
// ops through their logical [2, B, G, T, Dh] view; append also writes the
// new tokens into the physical state, returned in Result.States. A paged or
// ragged layout describes the cache after the step's append (FlashInfer's
// convention: its lengths count the new tokens, and append writes them into
// the last S positions of each sequence through the same table).
//
// A typical test:
//
//	dims := map[string]int64{"B": 3, "S": 7, "T": 33}
//	in, _ := interp.RandomInputs(g, dims, seed)
//	full, _, _ := interp.DeriveDims(g, dims) // binds a paged cache's P and N
//	res, _ := interp.Run(g, full, in, interp.Options{Round: true})
package interp
