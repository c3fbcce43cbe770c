package runtime

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "w.safetensors")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSafetensorsRoundTrip(t *testing.T) {
	specs := []TensorSpec{
		{Name: "wqkv", DType: "BF16", Shape: []int64{3, 5}},
		{Name: "wn", DType: "F32", Shape: []int64{7}},
		{Name: "scale", DType: "F8_E4M3", Shape: []int64{}},
	}
	var data [][]byte
	for i, s := range specs {
		b, err := RandomTensor(s, uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b)
	}
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, specs, data); err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint64(buf.Bytes()); (8+n)%8 != 0 {
		t.Errorf("data starts at %d, not 8-byte aligned", 8+n)
	}
	f, err := OpenSafetensors(writeFile(t, buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, s := range specs {
		got, err := f.Read(s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data[i]) {
			t.Errorf("%s: read back differs", s.Name)
		}
	}
	if f.Has("nope") {
		t.Error("Has(nope)")
	}
	for _, tc := range []struct {
		spec TensorSpec
		want string
	}{
		{TensorSpec{Name: "nope", DType: "BF16", Shape: []int64{1}}, `no tensor "nope"`},
		{TensorSpec{Name: "wqkv", DType: "F16", Shape: []int64{3, 5}}, `tensor "wqkv" is BF16[3 5]; the layer's is F16[3 5]`},
		{TensorSpec{Name: "wqkv", DType: "BF16", Shape: []int64{5, 3}}, `the layer's is BF16[5 3]`},
	} {
		if _, err := f.Read(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read(%v) = %v, want an error with %q", tc.spec, err, tc.want)
		}
	}
}

func TestSafetensorsBadFiles(t *testing.T) {
	header := func(js string, data int) []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(js)))
		return append(append(b, js...), make([]byte, data)...)
	}
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "no safetensors header length"},
		{"huge header", binary.LittleEndian.AppendUint64(nil, 1<<40), "header of 1099511627776 bytes"},
		{"not JSON", header("[1, 2", 0), "not a JSON object"},
		{"bad entry", header(`{"w": {"dtype": 3}}`, 0), `tensor "w"`},
		{"dtype", header(`{"w": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}}`, 8), `dtype "F64"`},
		{"past the end", header(`{"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}`, 8), "outside the 8 data bytes"},
		{"size", header(`{"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}`, 8), "8 bytes for F32[3], which needs 12"},
		{"negative", header(`{"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}`, 8), `dtype "F32"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := OpenSafetensors(writeFile(t, tc.file))
			if err == nil {
				f.Close()
				t.Fatalf("opened; want an error with %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
	if _, err := OpenSafetensors(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("opened a missing file")
	}
	if err := WriteSafetensors(&bytes.Buffer{}, []TensorSpec{{Name: "w", DType: "F32", Shape: []int64{2}}}, [][]byte{make([]byte, 4)}); err == nil {
		t.Error("wrote 4 bytes for F32[2]")
	}
}

func TestRandomTensor(t *testing.T) {
	spec := TensorSpec{Name: "wo", DType: "BF16", Shape: []int64{4096, 8}}
	a, err := RandomTensor(spec, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RandomTensor(spec, 7)
	c, _ := RandomTensor(spec, 8)
	other, _ := RandomTensor(TensorSpec{Name: "wd", DType: "BF16", Shape: spec.Shape}, 7)
	if !bytes.Equal(a, b) || bytes.Equal(a, c) || bytes.Equal(a, other) {
		t.Fatal("RandomTensor must depend on the seed and the name, and on nothing else")
	}
	// fan-in 4096: scale 2^-6, values m/128 · 2^-6 with |m| <= 128.
	zeros, big := 0, 0
	for i := 0; i < len(a); i += 2 {
		bits := uint32(binary.LittleEndian.Uint16(a[i:])) << 16
		x := float64(math.Float32frombits(bits))
		if x == 0 {
			zeros++
		}
		if x > 1.0/64 || x < -1.0/64 {
			t.Fatalf("value %g outside ±2^-6", x)
		}
		if x > 1.0/128 || x < -1.0/128 {
			big++
		}
		if m := x * 128 * 64; m != float64(int(m)) {
			t.Fatalf("value %g is not on the grid", x)
		}
	}
	if n := len(a) / 2; zeros > n/50 || big < n/3 {
		t.Errorf("%d zeros and %d values over half the range in %d: not uniform", zeros, big, n)
	}
	ids, _ := RandomTensor(TensorSpec{Name: "pos", DType: "I32", Shape: []int64{5}}, 1)
	if !bytes.Equal(ids, make([]byte, 20)) {
		t.Error("I32 tensors must be zero")
	}
	if _, err := RandomTensor(TensorSpec{Name: "x", DType: "F64", Shape: []int64{1}}, 1); err == nil {
		t.Error("F64 accepted")
	}
}

func TestEncodeMinifloat(t *testing.T) {
	for _, tc := range []struct {
		x          float64
		mant, bias int
		want       uint32
	}{
		{1, 10, 15, 0x3c00}, {-2, 10, 15, 0xc000}, {65504, 10, 15, 0x7bff}, {0x1p-24, 10, 15, 0x0001},
		{1, 3, 7, 0x38}, {448, 3, 7, 0x7e}, {0x1p-9, 3, 7, 0x01}, {-0.5, 3, 7, 0xb0},
	} {
		if got := EncodeMinifloat(tc.x, tc.mant, tc.bias); got != tc.want {
			t.Errorf("EncodeMinifloat(%g, %d, %d) = %#x, want %#x", tc.x, tc.mant, tc.bias, got, tc.want)
		}
	}
}
