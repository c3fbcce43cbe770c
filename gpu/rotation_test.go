package gpu

import "testing"

func TestRotation(t *testing.T) {
	const l2 = 60 << 20
	for _, c := range []struct {
		bytes int64
		want  int
	}{
		{454483972, 1},  // Llama-3-8B's decode layer: one instance is over 3× the L2
		{3 * l2, 1},     // exactly 3× the L2
		{3*l2 - 1, 2},   // just under it
		{60 << 20, 3},   // one L2
		{1 << 20, 8},    // a small layer: capped
		{0, 8},          // no bytes: capped, no division by zero
		{3*l2/2 + 1, 2}, // a little over half of 3× the L2
	} {
		if got := Rotation(c.bytes, l2); got != c.want {
			t.Errorf("Rotation(%d, %d) = %d, want %d", c.bytes, int64(l2), got, c.want)
		}
	}
}
