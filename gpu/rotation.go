package gpu

// MaxStepRotation is the most instances of a layer a step is timed over.
const MaxStepRotation = 8

// Rotation is how many instances of bytes each a step is timed over, in
// turn, so that together they span three times the L2 (l2 bytes) and no
// step finds the one before's weights there: at least 1, at most
// MaxStepRotation. fuser bench and the generated layers' timing
// (gpu/layerstep) both use it.
func Rotation(bytes, l2 int64) int {
	return int(min(max(1, (3*l2+bytes-1)/max(bytes, 1)), MaxStepRotation))
}
