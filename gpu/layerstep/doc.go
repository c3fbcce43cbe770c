// Package layerstep times a layer's step the way a user runs it: through
// the Go package `fuser build` generates (its New, InitRandom, Forward and
// Capture), not through the plan runner `fuser bench` uses. The timing
// method is fuser bench's (gpu.Bench.Time: each step between two events,
// queued behind a hold kernel, the median reported; over gpu.Rotation
// instances), so that the two step times agree and a difference means the
// generated package launches something the plan runner does not.
//
// The generator gpu/cmd/layerstep writes the packages of the bench
// targets and a main that passes them to Main; `make gpu-bundle` builds
// it into .gpu/layerstep, and gpu/run.sh runs it beside fuser bench and
// checks it against fuser bench's graph step (-against).
package layerstep
