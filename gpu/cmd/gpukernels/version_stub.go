//go:build !nvrtc

package main

import "github.com/fuser-dev/fuser/codegen/nvrtc"

// nvrtcVersion fails in a build without NVRTC (no nvrtc tag).
func nvrtcVersion() (int, int, error) { return 0, 0, nvrtc.ErrUnavailable }
