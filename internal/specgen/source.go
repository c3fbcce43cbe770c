package specgen

// Source gives the generator its choices: IntN returns a number in [0, n).
// *math/rand/v2.Rand is one; Bytes is another, for coverage-guided fuzzing.
type Source interface {
	IntN(n int) int
}

// Bytes is a Source that reads its choices from a byte string, so that a
// fuzzer mutating the bytes mutates the spec choice by choice. Each choice
// takes one byte (two when n > 256); once the bytes run out every choice is 0,
// which always yields a small valid spec.
type Bytes struct {
	b []byte
}

// NewBytes returns a Source reading b.
func NewBytes(b []byte) *Bytes { return &Bytes{b: b} }

// IntN returns the next choice in [0, n); n must be positive.
func (s *Bytes) IntN(n int) int {
	if n <= 1 {
		return 0
	}
	need := 1
	if n > 256 {
		need = 2
	}
	v := 0
	for range need {
		v <<= 8
		if len(s.b) > 0 {
			v |= int(s.b[0])
			s.b = s.b[1:]
		}
	}
	return v % n
}
