//go:build !nvrtc

package nvrtc

import (
	"errors"
	"testing"
)

func TestCompileUnavailable(t *testing.T) {
	if _, err := Compile("", "x.cu", "sm_90a"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("got %v, want ErrUnavailable", err)
	}
}
