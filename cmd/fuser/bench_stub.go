//go:build !cuda

package main

import (
	"fmt"
	"io"
)

func init() {
	registered = append(registered,
		command{"bench", benchUsage, benchDoc, needsCUDA("bench")},
		command{"profile", profileUsage, profileDoc, needsCUDA("profile")})
}

// needsCUDA is the stand-in for a command that runs kernels on a GPU.
func needsCUDA(name string) func([]string, io.Writer) error {
	return func([]string, io.Writer) error {
		return fmt.Errorf("fuser %s: this fuser was built without CUDA; build it with -tags cuda and the flags of scripts/cuda-sdk.sh (make gpu-bundle does) and run it on a GPU machine", name)
	}
}
