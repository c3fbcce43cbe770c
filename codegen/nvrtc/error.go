package nvrtc

import "fmt"

// Error is a failed compilation with NVRTC's log.
type Error struct {
	Name, Arch string
	// Err is NVRTC's result, such as NVRTC_ERROR_COMPILATION.
	Err error
	// Log is the compiler's diagnostics.
	Log string
}

// Error prints the result and the log.
func (e *Error) Error() string {
	return fmt.Sprintf("nvrtc %s for %s: %v\n%s", e.Name, e.Arch, e.Err, e.Log)
}

// Unwrap returns NVRTC's result.
func (e *Error) Unwrap() error { return e.Err }
