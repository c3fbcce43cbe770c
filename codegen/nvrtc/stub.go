//go:build !nvrtc

package nvrtc

// Compile returns ErrUnavailable: this build has no NVRTC (no nvrtc tag).
func Compile(src, name, arch string) (*Result, error) {
	return nil, ErrUnavailable
}
