//go:build !cuda

package main

import (
	"fmt"
	"io"
)

func init() {
	registered = append(registered, command{"bench", benchUsage, benchDoc, func([]string, io.Writer) error {
		return fmt.Errorf("fuser bench: this fuser was built without CUDA; build it with -tags cuda and the flags of scripts/cuda-sdk.sh (make gpu-bundle does) and run it on a GPU machine")
	}})
}
