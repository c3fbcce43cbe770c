// Package laddercheck checks the CUDA-graph ladder on the device the way a
// user runs it: through the Go package `fuser build` generates for each
// of its Targets (New, InitRandom, Ladder, Step, Forward, the buffer
// accessors), not through a copy of its forward.
//
// For every step (a batch at a context) it runs the graph step on a Layer
// made at the planned dims, then Forward eagerly on a Layer made with the
// batch dim at the step's bucket, over the same padded inputs, and, when
// the batch is padded, on one made at the batch itself, over the unpadded
// inputs. Each run starts from the same state: every input, state, output
// and the arena poisoned (gpu.Poison), then InitRandom. It checks that
//
//   - capturing the ladder runs nothing, and each graph step is exactly
//     one launch (a graph; the inputs' copies are not launches) in the
//     bucket runtime.PickBucket picks;
//   - the graph step equals the eager step at the bucket bit for bit:
//     inputs as staged, states, outputs and arena;
//   - a padded step equals the unpadded eager step on the batch's output
//     rows and on the states but the room past their planned size (a
//     paged pool's scratch page), so a padded sequence wrote nowhere else;
//   - every run wrote its results: the batch's output rows hold no NaN or
//     infinity (the poison is NaN), and every state changed (the append);
//   - Step before Ladder, a second Ladder, and steps of 0 sequences, of
//     more than the largest bucket, or with an input short or left out
//     are errors that enqueue nothing.
//
// The part that needs no GPU (untagged: the targets, the generated
// package's layout from the code generator's description, the steps'
// inputs, the comparisons, the results) is tested on the CPU; run.go and
// main.go (tag cuda) drive the device. The generator gpu/cmd/laddercheck
// writes the targets' packages and a main passing them to Main; `make
// gpu-bundle` builds it into .gpu/laddercheck, and gpu/run.sh runs it in
// its ladder step (ladder.log, ladder.json).
package laddercheck
