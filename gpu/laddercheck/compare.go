package laddercheck

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/fuser-dev/fuser/gpu"
	"github.com/fuser-dev/fuser/ir"
)

// Snapshot is a Layer's buffers as downloaded after a run, by Buffer.Key,
// and the arena (ArenaKey).
type Snapshot map[string][]byte

// Compare compares got with want bit for bit, key by key over want's keys;
// keep, when set, limits a key to the bytes it returns (nil leaves the key
// out). It returns the bytes compared and an error for each key that
// differs, is missing from got or differs in size.
func Compare(what string, want, got Snapshot, keep func(key string, b []byte) []byte) (int64, []error) {
	var n int64
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(want)) {
		w, g := want[key], got[key]
		if g == nil && w != nil {
			errs = append(errs, fmt.Errorf("%s: %s is missing", what, key))
			continue
		}
		if keep != nil {
			w, g = keep(key, w), keep(key, g)
		}
		if w == nil {
			continue
		}
		n += int64(len(w))
		if at := gpu.Bitwise(w, g); at >= 0 {
			errs = append(errs, fmt.Errorf("%s: %s differs at byte %d of %d", what, key, at, len(w)))
		}
	}
	return n, errs
}

// RealRows keeps of a snapshot what a step of batch sequences padded to a
// bucket shares with the unpadded step: the outputs' rows of the batch,
// and the states as the package sizes them for its planned dims, without
// the room past them the padding writes into (a paged pool's scratch
// page).
func (l *Layout) RealRows(batch int) func(key string, b []byte) []byte {
	return func(key string, b []byte) []byte {
		for _, buf := range l.Buffers {
			if buf.Key() != key {
				continue
			}
			switch buf.Role {
			case "output":
				return b[:min(len(b), batch*int(buf.RowBytes))]
			case "state":
				return b[:min(len(b), int(buf.Bytes))]
			}
		}
		return nil
	}
}

// Written checks that a run of batch sequences wrote its results: every
// output's rows of the batch hold no NaN (every output starts as
// gpu.Poison, a NaN in each float dtype) and no infinity, an integer
// output's rows are not all poison, and every state differs from what it
// held before the run (the new tokens' keys and values appended).
func (l *Layout) Written(what string, before, after Snapshot, batch int) []error {
	var errs []error
	for _, b := range l.Buffers {
		key := b.Key()
		got := after[key]
		switch b.Role {
		case "output":
			rows := got[:min(len(got), batch*int(b.RowBytes))]
			if err := finite(rows, b.Value.Type.DType); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", what, key, err))
			}
		case "state":
			if gpu.Bitwise(before[key], got) < 0 {
				errs = append(errs, fmt.Errorf("%s: %s holds what it held before the step", what, key))
			}
		}
	}
	return errs
}

// finite reports rows with no element, a NaN or an infinity (a float
// dtype), or all gpu.Poison (an integer one).
func finite(rows []byte, dt ir.DType) error {
	if len(rows) == 0 {
		return fmt.Errorf("no rows")
	}
	if dt == ir.I32 {
		if gpu.Unwritten(rows) {
			return fmt.Errorf("never written")
		}
		return nil
	}
	for i, x := range gpu.Decode(rows, dt) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("element %d of the batch's rows is %v (never written, or not finite)", i, x)
		}
	}
	return nil
}
