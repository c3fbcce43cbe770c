package gpu

// Unwritten reports whether every byte of an output downloaded after a run
// is still Poison, the byte it was filled with before: the run never wrote
// it. Compare alone cannot tell where the reference is NaN too, or for i32,
// whose poison reads as -1.
func Unwritten(b []byte) bool {
	for _, c := range b {
		if c != Poison {
			return false
		}
	}
	return len(b) > 0
}
