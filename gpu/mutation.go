package gpu

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// Mutation corrupts a step on purpose, to show which checks catch a
// kernel's wrong result (a mutation run): after each eager launch of a
// kernel whose plan name matches Kernel, every buffer it writes but a state
// is multiplied by Scale (0 zeroes it). Device.Mutation applies it.
type Mutation struct {
	Kernel *regexp.Regexp
	Scale  float64
}

// ParseMutation reads "REGEXP=SCALE", as `attention=1.1` (the last = splits);
// "" is no mutation.
func ParseMutation(s string) (*Mutation, error) {
	if s == "" {
		return nil, nil
	}
	i := strings.LastIndex(s, "=")
	if i < 0 {
		return nil, fmt.Errorf("mutation %q: want KERNEL_REGEXP=SCALE", s)
	}
	re, err := regexp.Compile(s[:i])
	if err != nil {
		return nil, fmt.Errorf("mutation %q: %w", s, err)
	}
	f, err := strconv.ParseFloat(s[i+1:], 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("mutation %q: the scale must be a finite number", s)
	}
	return &Mutation{Kernel: re, Scale: f}, nil
}

// String is the mutation as ParseMutation reads it.
func (m *Mutation) String() string { return fmt.Sprintf("%s=%g", m.Kernel, m.Scale) }

// scaled is data, elements of dtype dt, with each multiplied by the
// mutation's scale.
func (m *Mutation) scaled(data []byte, dt ir.DType) []byte {
	xs := Decode(data, dt)
	for i := range xs {
		xs[i] *= m.Scale
	}
	return Encode(xs, dt)
}
