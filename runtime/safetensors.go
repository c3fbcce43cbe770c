package runtime

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// This file reads and writes the safetensors format (Hugging Face's): an
// 8-byte little-endian header length n, n bytes of JSON naming every tensor
// with its dtype, shape and [begin, end) byte offsets into the data that
// follows, then the data. No build tag: it needs no GPU.
//
// Why not github.com/nlpodyssey/safetensors: it parses a whole file held in
// memory (a layer's weights are hundreds of MB, read here tensor by tensor
// with ReadAt) and has no F8_E4M3, one of our dtypes.

// TensorSpec names a tensor of a layer: its name in the spec (the key in a
// safetensors file), its dtype as safetensors spells it (BF16, F16, F32,
// I32, F8_E4M3) and its shape at the planned dims.
type TensorSpec struct {
	Name  string
	DType string
	Shape []int64
}

// dtypeSizes are the bytes per element of the dtypes a layer can hold.
var dtypeSizes = map[string]int64{"BF16": 2, "F16": 2, "F32": 4, "I32": 4, "F8_E4M3": 1}

// Bytes is the tensor's size, or -1 for an unknown dtype, a negative
// extent or a size past 2⁶².
func (t TensorSpec) Bytes() int64 {
	n, ok := dtypeSizes[t.DType]
	if !ok {
		return -1
	}
	for _, d := range t.Shape {
		if d < 0 || (d > 0 && n > (1<<62)/d) {
			return -1
		}
		n *= d
	}
	return n
}

// maxHeader bounds the JSON header (the format's own limit is 100 MB).
const maxHeader = 100 << 20

type stEntry struct {
	DType   string   `json:"dtype"`
	Shape   []int64  `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// Safetensors is an open safetensors file.
type Safetensors struct {
	path    string
	f       *os.File
	data    int64 // file offset of the data section
	tensors map[string]stEntry
}

// OpenSafetensors opens path and checks its header: valid JSON, known
// fields, every tensor's offsets inside the file and matching its dtype
// and shape.
func OpenSafetensors(path string) (*Safetensors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	s, err := readHeader(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func readHeader(path string, f *os.File) (*Safetensors, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	var lenBuf [8]byte
	if _, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("runtime: %s: no safetensors header length: %w", path, err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > maxHeader || int64(n) > st.Size()-8 {
		return nil, fmt.Errorf("runtime: %s: header of %d bytes in a file of %d", path, n, st.Size())
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return nil, fmt.Errorf("runtime: %s: header: %w", path, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, fmt.Errorf("runtime: %s: header is not a JSON object: %w", path, err)
	}
	s := &Safetensors{path: path, f: f, data: 8 + int64(n), tensors: map[string]stEntry{}}
	size := st.Size() - s.data
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var e stEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("runtime: %s: tensor %q: %w", path, name, err)
		}
		want := TensorSpec{Name: name, DType: e.DType, Shape: e.Shape}.Bytes()
		switch {
		case want < 0:
			return nil, fmt.Errorf("runtime: %s: tensor %q has dtype %q (fuser layers hold BF16, F16, F32, I32, F8_E4M3)", path, name, e.DType)
		case e.Offsets[0] < 0 || e.Offsets[1] < e.Offsets[0] || e.Offsets[1] > size:
			return nil, fmt.Errorf("runtime: %s: tensor %q: offsets %v outside the %d data bytes", path, name, e.Offsets, size)
		case e.Offsets[1]-e.Offsets[0] != want:
			return nil, fmt.Errorf("runtime: %s: tensor %q: %d bytes for %s%v, which needs %d", path, name, e.Offsets[1]-e.Offsets[0], e.DType, e.Shape, want)
		}
		s.tensors[name] = e
	}
	return s, nil
}

// Has reports whether the file holds a tensor called name.
func (s *Safetensors) Has(name string) bool { _, ok := s.tensors[name]; return ok }

// Read returns the bytes of tensor t.Name, which must have t's dtype and
// shape.
func (s *Safetensors) Read(t TensorSpec) ([]byte, error) {
	e, ok := s.tensors[t.Name]
	if !ok {
		return nil, fmt.Errorf("runtime: %s: no tensor %q", s.path, t.Name)
	}
	if e.DType != t.DType || !slices.Equal(e.Shape, t.Shape) {
		return nil, fmt.Errorf("runtime: %s: tensor %q is %s%v; the layer's is %s%v", s.path, t.Name, e.DType, e.Shape, t.DType, t.Shape)
	}
	b := make([]byte, e.Offsets[1]-e.Offsets[0])
	if _, err := s.f.ReadAt(b, s.data+e.Offsets[0]); err != nil {
		return nil, fmt.Errorf("runtime: %s: tensor %q: %w", s.path, t.Name, err)
	}
	return b, nil
}

// Close closes the file.
func (s *Safetensors) Close() error { return s.f.Close() }

// WriteSafetensors writes tensors (data[i] holding tensors[i]'s bytes) to
// w in the safetensors format, in the order given.
func WriteSafetensors(w io.Writer, tensors []TensorSpec, data [][]byte) error {
	if len(tensors) != len(data) {
		return errors.New("runtime: write safetensors: a data slice per tensor")
	}
	hdr := map[string]stEntry{}
	var off int64
	for i, t := range tensors {
		if n := t.Bytes(); n < 0 || n != int64(len(data[i])) {
			return fmt.Errorf("runtime: write safetensors: tensor %q: %d bytes for %s%v", t.Name, len(data[i]), t.DType, t.Shape)
		}
		if _, dup := hdr[t.Name]; dup {
			return fmt.Errorf("runtime: write safetensors: two tensors named %q", t.Name)
		}
		hdr[t.Name] = stEntry{DType: t.DType, Shape: t.Shape, Offsets: [2]int64{off, off + int64(len(data[i]))}}
		off += int64(len(data[i]))
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	for len(js)%8 != 0 { // the data starts 8-byte aligned, as the format recommends
		js = append(js, ' ')
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(js)))
	if _, err := w.Write(lenBuf[:]); err != nil {
		return err
	}
	if _, err := w.Write(js); err != nil {
		return err
	}
	for _, d := range data {
		if _, err := w.Write(d); err != nil {
			return err
		}
	}
	return nil
}
