//go:build cuda

package runtime

// #include <cuda.h>
// static CUresult beginCapture(CUstream s) { return cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL); }
// static CUresult endCapture(CUstream s, CUgraph* g) { return cuStreamEndCapture(s, g); }
// static CUresult instantiate(CUgraphExec* e, CUgraph g) { return cuGraphInstantiate(e, g, 0); }
// static CUresult launchGraph(CUgraphExec e, CUstream s) { return cuGraphLaunch(e, s); }
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// gorgonia.org/cu v0.9.6 has no stream capture, graph instantiation or
// graph launch; this shim adds them. cu.Stream.C() is cu's own C.CUstream:
// cgo types are per package, so the handle converts through unsafe.Pointer.

func (s *Stream) c() C.CUstream { return C.CUstream(unsafe.Pointer(s.s.C())) }

func check(r C.CUresult, what string) error {
	if r != C.CUDA_SUCCESS {
		return fmt.Errorf("runtime: %s: %s (CUresult %d)", what, errorText(r), int(r))
	}
	return nil
}

// Graph is a captured CUDA graph, not yet instantiated.
type Graph struct{ g C.CUgraph }

// GraphExec is an instantiated graph, ready to launch.
type GraphExec struct{ e C.CUgraphExec }

// BeginCapture starts capturing the work enqueued on s into a graph
// instead of running it.
func BeginCapture(s *Stream) error {
	if err := check(C.beginCapture(s.c()), "begin capture"); err != nil {
		return err
	}
	s.capturing = true
	return nil
}

// EndCapture ends the capture on s and returns the graph.
func EndCapture(s *Stream) (*Graph, error) {
	s.capturing = false
	g := &Graph{}
	if err := check(C.endCapture(s.c(), &g.g), "end capture"); err != nil {
		return nil, err
	}
	return g, nil
}

// Instantiate makes an executable graph.
func (g *Graph) Instantiate() (*GraphExec, error) {
	e := &GraphExec{}
	if err := check(C.instantiate(&e.e, g.g), "instantiate graph"); err != nil {
		return nil, err
	}
	return e, nil
}

// Destroy releases the graph (its executable graphs stay valid).
func (g *Graph) Destroy() error { return check(C.cuGraphDestroy(g.g), "destroy graph") }

// Launch enqueues the whole graph on s.
func (e *GraphExec) Launch(s *Stream) error {
	if err := check(C.launchGraph(e.e, s.c()), "launch graph"); err != nil {
		return err
	}
	s.counts.Graphs++
	return nil
}

// Destroy releases the executable graph.
func (e *GraphExec) Destroy() error { return check(C.cuGraphExecDestroy(e.e), "destroy graph exec") }

// Capture runs body with s in capture mode and instantiates what it
// enqueued. The capture is ended even when body fails.
func Capture(s *Stream, body func() error) (*GraphExec, error) {
	if err := BeginCapture(s); err != nil {
		return nil, err
	}
	bodyErr := body()
	g, err := EndCapture(s)
	if bodyErr != nil || err != nil {
		if g != nil {
			err = errors.Join(err, g.Destroy())
		}
		return nil, errors.Join(bodyErr, err)
	}
	e, err := g.Instantiate()
	return e, errors.Join(err, g.Destroy())
}
