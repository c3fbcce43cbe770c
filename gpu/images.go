package gpu

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/fuser-dev/fuser/codegen/nvrtc"
)

// The kernel images are compiled on the build machine (NVRTC, make
// gpu-bundle) and shipped to the GPU machine, whose binaries must not link
// NVRTC: a directory holds one gzipped cubin per module source,
// <key>.cubin.gz (key: ImageKey of the source), and manifest.json.

// ManifestFile is the index of an image directory.
const ManifestFile = "manifest.json"

// Manifest describes an image directory.
type Manifest struct {
	Arch     string `json:"arch"`
	Compiler string `json:"compiler"`
	// Images maps a key to the ptxas report of the module's entries.
	Images map[string][]nvrtc.KernelInfo `json:"images"`
}

// Images finds compiled kernel images: in Dir, else (when NVCC names a
// compiler, such as the nvcc of the GPU machine) compiled on the spot into
// a temporary directory, which is logged.
type Images struct {
	Dir  string
	NVCC string
	// Log, when set, is told about every image compiled on the spot.
	Log func(format string, args ...any)

	mu       sync.Mutex
	tmp      string
	manifest *Manifest
}

// ErrNoImage is returned for a source that was not compiled into Dir and
// that no compiler is there to compile.
var ErrNoImage = errors.New("no compiled image (rebuild the bundle with make gpu-bundle, or give an nvcc)")

// FindNVCC returns the nvcc on PATH or of /usr/local/cuda, or "".
func FindNVCC() string {
	if p, err := exec.LookPath("nvcc"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/local/cuda/bin/nvcc"); err == nil {
		return "/usr/local/cuda/bin/nvcc"
	}
	return ""
}

// Manifest reads Dir's manifest (an empty one when there is none).
func (im *Images) Manifest() *Manifest {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.manifest == nil {
		im.manifest = &Manifest{Images: map[string][]nvrtc.KernelInfo{}}
		if b, err := os.ReadFile(filepath.Join(im.Dir, ManifestFile)); err == nil {
			_ = json.Unmarshal(b, im.manifest)
		}
	}
	return im.manifest
}

// Load returns the image of the module whose source is src.
func (im *Images) Load(src string) ([]byte, error) {
	key := ImageKey(src)
	if im.Dir != "" {
		b, err := ReadImage(filepath.Join(im.Dir, key+".cubin.gz"))
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if im.NVCC == "" {
		return nil, fmt.Errorf("image %s: %w", key, ErrNoImage)
	}
	return im.compile(key, src)
}

// compile compiles src with nvcc into a cubin for Arch.
func (im *Images) compile(key, src string) ([]byte, error) {
	im.mu.Lock()
	if im.tmp == "" {
		d, err := os.MkdirTemp("", "fuser-kernels-")
		if err != nil {
			im.mu.Unlock()
			return nil, err
		}
		im.tmp = d
	}
	dir := im.tmp
	im.mu.Unlock()
	cu, out := filepath.Join(dir, key+".cu"), filepath.Join(dir, key+".cubin")
	if b, err := os.ReadFile(out); err == nil {
		return b, nil
	}
	if err := os.WriteFile(cu, []byte(src), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(im.NVCC, "-cubin", "-std=c++17", "-arch="+Arch, "-o", out, cu)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("image %s: %s: %v\n%s", key, im.NVCC, err, msg)
	}
	if im.Log != nil {
		im.Log("compiled image %s with %s (not in %q)", key, im.NVCC, im.Dir)
	}
	return os.ReadFile(out)
}

// ReadImage reads a gzipped image.
func ReadImage(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return io.ReadAll(z)
}

// WriteImage writes a gzipped image.
func WriteImage(path string, image []byte) error {
	var buf bytes.Buffer
	z, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := z.Write(image); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// KernelsDir is the directory of compiled images a command reads: its
// -kernels flag, else $FUSER_KERNELS, else kernels/ beside the executable
// (where the bundle puts them).
func KernelsDir(flagDir string) string {
	if flagDir != "" {
		return flagDir
	}
	if d := os.Getenv("FUSER_KERNELS"); d != "" {
		return d
	}
	if exe, err := os.Executable(); err == nil {
		return filepath.Join(filepath.Dir(exe), "kernels")
	}
	return "kernels"
}
