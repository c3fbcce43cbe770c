package build

import "github.com/fuser-dev/fuser/codegen/nvrtc"

// NVRTC is the Compiler that compiles with codegen/nvrtc for arch (such as
// sm_90a, which also gives the ptxas report). In a build without the nvrtc
// tag it fails with nvrtc.ErrUnavailable.
func NVRTC(arch string) Compiler {
	return func(src string) ([]byte, string, error) {
		r, err := nvrtc.Compile(src, SourceFile, arch)
		if err != nil {
			return nil, "", err
		}
		return r.PTX, r.Log, nil
	}
}
