//go:build cuda

package runtime

import (
	"fmt"
	goruntime "runtime"

	"gorgonia.org/cu"
)

// Context is a CUDA context on one device. It is current on the OS thread
// that made it: NewContext locks the calling goroutine to its thread, and
// every call into this package must come from that goroutine.
type Context struct {
	dev cu.Device
	ctx cu.CUContext
}

// NewContext locks the calling goroutine to its OS thread and makes a
// context on device ordinal.
func NewContext(ordinal int) (*Context, error) {
	goruntime.LockOSThread()
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		goruntime.UnlockOSThread()
		return nil, fmt.Errorf("runtime: device %d: %w", ordinal, err)
	}
	ctx, err := dev.MakeContext(cu.SchedAuto)
	if err != nil {
		goruntime.UnlockOSThread()
		return nil, fmt.Errorf("runtime: context on device %d: %w", ordinal, err)
	}
	return &Context{dev: dev, ctx: ctx}, nil
}

// Close destroys the context (and everything allocated in it) and unlocks
// the goroutine from its thread.
func (c *Context) Close() error {
	defer goruntime.UnlockOSThread()
	if err := c.ctx.Destroy(); err != nil {
		return fmt.Errorf("runtime: destroy context: %w", err)
	}
	return nil
}

// Synchronize waits for all work in the context.
func (c *Context) Synchronize() error {
	if err := cu.Synchronize(); err != nil {
		return fmt.Errorf("runtime: synchronize: %w", err)
	}
	return nil
}

// Stream is a CUDA stream of a context. It counts what is enqueued on it
// through this package (see Counts).
type Stream struct {
	s cu.Stream
	// capturing is set between BeginCapture and EndCapture.
	capturing bool
	counts    Counts
}

// Counts are what has been enqueued on a stream through this package. A
// launch is a kernel launch or a graph launch: each costs the CPU a launch
// call and the GPU a dispatch. Copies and memsets are counted apart and are
// not launches (a step's host-to-device copies of its inputs, say).
type Counts struct {
	// Kernels are kernel launches run on the stream, not captured.
	Kernels int64
	// Graphs are graph launches.
	Graphs int64
	// Captured are kernel launches recorded into a graph during a capture;
	// they run only when the graph is launched.
	Captured int64
	// Copies are asynchronous copies and memsets.
	Copies int64
}

// Launches is Kernels + Graphs.
func (c Counts) Launches() int64 { return c.Kernels + c.Graphs }

// Sub is c - d, what was enqueued between two readings.
func (c Counts) Sub(d Counts) Counts {
	return Counts{Kernels: c.Kernels - d.Kernels, Graphs: c.Graphs - d.Graphs, Captured: c.Captured - d.Captured, Copies: c.Copies - d.Copies}
}

// Counts returns what has been enqueued on s so far.
func (s *Stream) Counts() Counts { return s.counts }

// launched counts a kernel launch on s.
func (s *Stream) launched() {
	if s.capturing {
		s.counts.Captured++
	} else {
		s.counts.Kernels++
	}
}

// NewStream makes a non-blocking stream (one that can be captured).
func (c *Context) NewStream() (*Stream, error) {
	s, err := cu.MakeStream(cu.NonBlocking)
	if err != nil {
		return nil, fmt.Errorf("runtime: make stream: %w", err)
	}
	return &Stream{s: s}, nil
}

// Synchronize waits for the stream's work.
func (s *Stream) Synchronize() error {
	if err := s.s.Synchronize(); err != nil {
		return fmt.Errorf("runtime: synchronize stream: %w", err)
	}
	return nil
}

// Destroy releases the stream.
func (s *Stream) Destroy() error {
	if err := s.s.Destroy(); err != nil {
		return fmt.Errorf("runtime: destroy stream: %w", err)
	}
	return nil
}

// Bind locks the calling goroutine to its OS thread and makes the context
// current there, for a goroutine other than the one that made it (a
// subtest, say) while that one waits; release undoes the lock.
func (c *Context) Bind() (release func(), err error) {
	goruntime.LockOSThread()
	if err := cu.SetCurrentContext(c.ctx); err != nil {
		goruntime.UnlockOSThread()
		return nil, fmt.Errorf("runtime: bind context: %w", err)
	}
	return goruntime.UnlockOSThread, nil
}
