//go:build cuda

package runtime

import (
	_ "embed"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// These tests need a GPU (see /work/shared/GPU.md): build the binary with
// go test -c -tags cuda and run it on the device.

//go:embed testdata/kernels.ptx
var kernelsPTX string

//go:embed testdata/tma.ptx
var tmaPTX string

func setup(t *testing.T) (*Context, *Module, *Stream) {
	t.Helper()
	ctx, err := NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Error(err)
		}
	})
	m, err := ctx.LoadModule(kernelsPTX)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	return ctx, m, s
}

func floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func bytesOf(f []float32) []byte {
	out := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
	}
	return out
}

// TestCaptureReplay captures 40 launches of axpy with a = 1 (x ← x + 1)
// into one graph, replays it twice and checks every element against the
// host: the recurrence does not converge, so every element counts the
// launches and a graph replayed once, or a launch lost from the capture,
// fails. x + 1 rounds alike on both sides (x·1 is exact, fused or not), so
// the comparison is exact.
//
// The launches are plain, then programmatic dependents of the one before
// (LaunchDependent: axpy does not trigger its dependent early, so each
// still starts when the one before ends, and the count must be exact), then
// dependents in clusters of two blocks (launchPairs).
func TestCaptureReplay(t *testing.T) {
	for _, launch := range []struct {
		name string
		fn   func(*Kernel, [3]int64, int, int64, *Stream, ...any) error
	}{{"plain", Launch}, {"dependent", LaunchDependent}, {"cluster", launchPairs}} {
		t.Run(launch.name, func(t *testing.T) { captureReplay(t, launch.fn) })
	}
}

func captureReplay(t *testing.T, launch func(*Kernel, [3]int64, int, int64, *Stream, ...any) error) {
	ctx, m, s := setup(t)
	k, err := m.Kernel("axpy")
	if err != nil {
		t.Fatal(err)
	}
	const n, steps, replays = 1<<20 + 3, 40, 2
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i%97) / 97
	}
	x, err := ctx.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	if err := x.CopyIn(bytesOf(in)); err != nil {
		t.Fatal(err)
	}
	g, err := Capture(s, func() error {
		for range steps {
			if err := launch(k, [3]int64{(n + 511) / 512 * 2, 1, 1}, 256, 0, s, x.Ptr, float32(1), int64(n)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Destroy()
	for range replays {
		if err := g.Launch(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 4*n)
	if err := x.CopyOut(out); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, got := range floats(out) {
		want := in[i]
		for range replays * steps {
			want++
		}
		if got != want {
			if bad == 0 {
				t.Errorf("x[%d] = %v from %v, want %v", i, got, in[i], want)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d elements wrong after replaying the graph %d times", bad, n, replays)
	}
}

// TestLargeShared launches with 100 KiB of dynamic shared memory, which
// needs the opt-in Launch makes.
func TestLargeShared(t *testing.T) {
	ctx, m, s := setup(t)
	k, err := m.Kernel("reverse")
	if err != nil {
		t.Fatal(err)
	}
	const n = 25600 // 100 KiB of floats
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	x, err := ctx.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	y, err := ctx.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Free()
	if err := x.CopyIn(bytesOf(in)); err != nil {
		t.Fatal(err)
	}
	if err := y.Memset(0, 4*n, 0xff); err != nil { // NaN: an element not written fails
		t.Fatal(err)
	}
	if err := Launch(k, [3]int64{1, 1, 1}, 1024, 4*n, s, x.Ptr, y.At(0), int32(n)); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 4*n)
	if err := y.CopyOut(out); err != nil {
		t.Fatal(err)
	}
	for i, v := range floats(out) {
		if v != float32(n-1-i) {
			t.Fatalf("y[%d] = %v, want %d", i, v, n-1-i)
		}
	}
}

// launchPairs is LaunchDependent in clusters of two blocks.
func launchPairs(k *Kernel, grid [3]int64, block int, shared int64, s *Stream, args ...any) error {
	return LaunchWith(k, grid, block, shared, LaunchOpts{Dependent: true, Cluster: 2}, s, args...)
}

func TestLaunchErrors(t *testing.T) {
	_, m, s := setup(t)
	k, err := m.Kernel("axpy")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		grid  [3]int64
		block int
		args  []any
		want  string
	}{
		{[3]int64{0, 1, 1}, 256, nil, "grid"},
		{[3]int64{1, 1, 1}, 2048, nil, "block"},
		{[3]int64{1, 1, 1}, 256, []any{"x"}, "unsupported type string"},
	} {
		if err := Launch(k, tc.grid, tc.block, 0, s, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error about %s", err, tc.want)
		}
	}
	if err := launchPairs(k, [3]int64{3, 1, 1}, 256, 0, s); err == nil || !strings.Contains(err.Error(), "clusters of 2") {
		t.Errorf("got %v, want an error about a grid of 3 in clusters of 2", err)
	}
	if _, err := m.Kernel("missing"); err == nil {
		t.Error("found a kernel that does not exist")
	}
}

// TestRowMap encodes the row map of a buffer of 64 rows of 128 16-bit
// elements (element j of row i holds i * 128 + j) and copies rows through
// it by the tensor copy engine (testdata/tma.cu, a map passed by value):
// rows 5 .. 20 come back as written, and rows 56 .. 71, past the map's 64
// rows, come back with the rows past the end as zeros, so the map's base,
// strides, box, swizzle and row count are the ones asked for. A base not
// 16-byte aligned gets the zero map, and a head dim the map cannot take an
// error.
func TestRowMap(t *testing.T) {
	ctx, _, s := setup(t)
	m, err := ctx.LoadModule(tmaPTX)
	if err != nil {
		t.Fatal(err)
	}
	k, err := m.Kernel("rows")
	if err != nil {
		t.Fatal(err)
	}
	const n, dh = 64, 128
	in := make([]byte, 2*n*dh)
	for e := range n * dh {
		binary.LittleEndian.PutUint16(in[2*e:], uint16(e))
	}
	x, err := ctx.Alloc(2 * n * dh)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	y, err := ctx.Alloc(2 * 16 * dh)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Free()
	if err := x.CopyIn(in); err != nil {
		t.Fatal(err)
	}
	tm, err := RowMap(x.Ptr, x.Ptr, n, dh)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []int{5, 56} {
		if err := y.Memset(0, 2*16*dh, 0xff); err != nil {
			t.Fatal(err)
		}
		if err := Launch(k, [3]int64{1, 1, 1}, 128, 0, s, tm, int32(r), y.At(0)); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 2*16*dh)
		if err := y.CopyOut(out); err != nil {
			t.Fatal(err)
		}
		for e := range 16 * dh {
			want := uint16(0)
			if row := r + e/dh; row < n {
				want = uint16(row*dh + e%dh)
			}
			if got := binary.LittleEndian.Uint16(out[2*e:]); got != want {
				t.Fatalf("rows from %d: element %d of row %d is %d, want %d", r, e%dh, r+e/dh, got, want)
			}
		}
	}
	if z, err := RowMap(x.Ptr+2, x.Ptr+2, n, dh); err != nil || z != (TensorMap{}) {
		t.Errorf("a base 2 bytes past alignment: map %x, error %v; want the zero map", z, err)
	}
	if _, err := RowMap(x.Ptr, x.Ptr, n, 96); err == nil || !strings.Contains(err.Error(), "96 elements") {
		t.Errorf("head dim 96: error %v", err)
	}
}
