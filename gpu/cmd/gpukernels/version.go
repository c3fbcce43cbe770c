//go:build nvrtc

package main

import "github.com/fuser-dev/fuser/codegen/nvrtc"

func nvrtcVersion() (int, int, error) { return nvrtc.Version() }
