package laddercheck

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/gpu"
	"github.com/fuser-dev/fuser/ir"
)

func clone(s Snapshot) Snapshot {
	out := Snapshot{}
	for k, v := range s {
		out[k] = slices.Clone(v)
	}
	return out
}

// errText joins errs into one string.
func errText(errs []error) string {
	if len(errs) == 0 {
		return ""
	}
	return errors.Join(errs...).Error()
}

func TestCompare(t *testing.T) {
	want := Snapshot{"output y": {1, 2, 3, 4}, "state kv": {5, 6, 7, 8, 9, 10}, ArenaKey: {}}
	if n, errs := Compare("same", want, clone(want), nil); n != 10 || len(errs) != 0 {
		t.Errorf("equal snapshots: %d bytes, %v; want 10 and no error", n, errs)
	}
	differs := clone(want)
	differs["state kv"][4] ^= 1
	if _, errs := Compare("step", want, differs, nil); !strings.Contains(errText(errs), "step: state kv differs at byte 4 of 6") || len(errs) != 1 {
		t.Errorf("a bit flipped: %v", errs)
	}
	missing := clone(want)
	delete(missing, "output y")
	if _, errs := Compare("step", want, missing, nil); !strings.Contains(errText(errs), "output y is missing") {
		t.Errorf("a key missing: %v", errs)
	}
	short := clone(want)
	short["output y"] = short["output y"][:3]
	if _, errs := Compare("step", want, short, nil); !strings.Contains(errText(errs), "output y differs at byte 3 of 4") {
		t.Errorf("a buffer shorter: %v", errs)
	}
	// keep: the first two bytes of the state only.
	keep := func(key string, b []byte) []byte {
		if key == "state kv" {
			return b[:2]
		}
		return nil
	}
	if n, errs := Compare("kept", want, differs, keep); n != 2 || len(errs) != 0 {
		t.Errorf("a difference past what keep keeps: %d bytes, %v; want 2 and no error", n, errs)
	}
	differs["state kv"][0] ^= 1
	if _, errs := Compare("kept", want, differs, keep); len(errs) != 1 {
		t.Errorf("a difference keep keeps: %v", errs)
	}
}

// pagedSnapshot is a snapshot of the paged target's buffers filled with
// fill, the outputs as bf16 1.0.
func pagedSnapshot(l *Layout, fill byte) Snapshot {
	s := Snapshot{ArenaKey: bytes.Repeat([]byte{fill}, 16)}
	for _, b := range l.Buffers {
		n := b.Bytes
		if b.Role == "state" {
			n += b.Bytes / 40 // the scratch page
		}
		s[b.Key()] = bytes.Repeat([]byte{fill}, int(n))
		if b.Role == "output" {
			s[b.Key()] = gpu.Encode(slices.Repeat([]float64{1}, int(n/2)), ir.BF16)
		}
	}
	return s
}

func TestRealRows(t *testing.T) {
	_, paged := targets(t)
	l := layout(t, paged)
	s := pagedSnapshot(l, 3)
	keep := l.RealRows(3)
	// y: rows of D=32 bf16; kv: the pool of 40 pages but the scratch one.
	for key, want := range map[string]int{"output y": 3 * 64, "state kv": 40 * 2 * 2 * 16 * 8 * 2, "input x": -1, ArenaKey: -1} {
		got := keep(key, s[key])
		if (want < 0) != (got == nil) || (want >= 0 && len(got) != want) {
			t.Errorf("RealRows(3) keeps %d bytes of %s (nil: %v), want %d", len(got), key, got == nil, want)
		}
	}
}

func TestWritten(t *testing.T) {
	_, paged := targets(t)
	l := layout(t, paged)
	before := pagedSnapshot(l, 3)
	after := clone(before)
	after["state kv"][7] = 4
	if errs := l.Written("step", before, after, 3); len(errs) != 0 {
		t.Errorf("a written step: %v", errs)
	}
	// NaN past the batch's rows is padding.
	nan := gpu.Encode([]float64{math.NaN()}, ir.BF16)
	padded := clone(after)
	copy(padded["output y"][3*64:], nan)
	if errs := l.Written("step", before, padded, 3); len(errs) != 0 {
		t.Errorf("NaN in a padded row: %v", errs)
	}
	for _, c := range []struct {
		name string
		edit func(Snapshot)
		want string
	}{
		{"output never written", func(s Snapshot) {
			s["output y"] = bytes.Repeat([]byte{gpu.Poison}, len(s["output y"]))
		}, "step: output y: element 0 of the batch's rows is NaN"},
		{"one element NaN", func(s Snapshot) { copy(s["output y"][2*64+10:], nan) }, "element 69 "},
		{"one element infinite", func(s Snapshot) {
			copy(s["output y"][20:], gpu.Encode([]float64{math.Inf(-1)}, ir.BF16))
		}, "element 10 of the batch's rows is -Inf"},
		{"state unchanged", func(s Snapshot) { s["state kv"] = slices.Clone(before["state kv"]) }, "state kv holds what it held before"},
	} {
		s := clone(after)
		c.edit(s)
		errs := l.Written("step", before, s, 3)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) {
			t.Errorf("%s: %v, want one error saying %q", c.name, errs, c.want)
		}
	}
}

// TestWrittenInt checks an i32 output: all poison is never written, a -1
// among other values is a value.
func TestWrittenInt(t *testing.T) {
	if err := finite(bytes.Repeat([]byte{gpu.Poison}, 8), ir.I32); err == nil {
		t.Error("an i32 output all poison: no error")
	}
	if err := finite(gpu.Encode([]float64{-1, 7}, ir.I32), ir.I32); err != nil {
		t.Errorf("an i32 output -1, 7: %v", err)
	}
	if err := finite(nil, ir.BF16); err == nil {
		t.Error("no rows: no error")
	}
}
