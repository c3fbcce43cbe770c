//go:build cuda

package cuda

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/ir/interp"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/runtime"
)

// The GPU test runs generated modules on a GPU and compares every output
// and cache with the reference interpreter. It needs a GPU, cgo, cuda.h and
// NVRTC: go test -tags 'cuda nvrtc' -run GPU ./codegen/cuda.

var gpuSpecs = flag.String("gpu.specs", "", "comma-separated specs for TestGPU (default: all)")
var gpuPlans = flag.String("gpu.plans", "fused,unfused", "plans for TestGPU")
var gpuS = flag.Int64("gpu.s", 0, "only bindings with this S (0: all)")

var gpuCubins = flag.String("gpu.cubins", "testdata/cubin", "directory of the cubins TestNVRTC wrote with -cubin.dir")

func encode(dt ir.DType, xs []float64) []byte {
	out := make([]byte, int64(len(xs))*dt.Size())
	for i, x := range xs {
		switch dt {
		case ir.BF16:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(math.Float32bits(float32(interp.RoundBF16(x)))>>16))
		case ir.F16:
			binary.LittleEndian.PutUint16(out[2*i:], f16bits(interp.RoundF16(x)))
		case ir.F32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(x)))
		case ir.I32:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(x)))
		case ir.FP8E4M3:
			out[i] = fp8bits(interp.RoundFP8E4M3(x))
		}
	}
	return out
}

func decode(dt ir.DType, b []byte) []float64 {
	n := int64(len(b)) / dt.Size()
	out := make([]float64, n)
	for i := range out {
		switch dt {
		case ir.BF16:
			out[i] = float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16))
		case ir.F16:
			out[i] = f16val(binary.LittleEndian.Uint16(b[2*i:]))
		case ir.F32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		case ir.I32:
			out[i] = float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		case ir.FP8E4M3:
			out[i] = fp8val(b[i])
		}
	}
	return out
}

func f16bits(x float64) uint16 {
	s := uint16(0)
	if x < 0 || x == 0 && math.Signbit(x) {
		s, x = 0x8000, -x
	}
	if x == 0 {
		return s
	}
	if math.IsInf(x, 0) || x > 65504 {
		return s | 0x7c00
	}
	e := math.Floor(math.Log2(x))
	if e < -14 {
		return s | uint16(math.Round(x/math.Ldexp(1, -24)))
	}
	m := x/math.Ldexp(1, int(e)) - 1
	return s | uint16(int(e)+15)<<10 | uint16(math.Round(m*1024))
}

func f16val(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e, m := int(h>>10&31), float64(h&1023)
	if e == 0 {
		return s * m * math.Ldexp(1, -24)
	}
	return s * (1 + m/1024) * math.Ldexp(1, e-15)
}

func fp8bits(x float64) uint8 {
	s := uint8(0)
	if x < 0 {
		s, x = 0x80, -x
	}
	if x == 0 {
		return s
	}
	e := math.Floor(math.Log2(x))
	if e < -6 {
		return s | uint8(math.Round(x/math.Ldexp(1, -9)))
	}
	m := x/math.Ldexp(1, int(e)) - 1
	return s | uint8(int(e)+7)<<3 | uint8(math.Round(m*8))
}

func fp8val(b uint8) float64 {
	s := 1.0
	if b&0x80 != 0 {
		s = -1
	}
	e, m := int(b>>3&15), float64(b&7)
	if e == 0 {
		return s * m * math.Ldexp(1, -9)
	}
	return s * (1 + m/8) * math.Ldexp(1, e-7)
}

// maxErr returns the largest |got - want| relative to the largest |want|.
func maxErr(got, want []float64) (float64, int) {
	var worst, scale float64
	at := -1
	for i := range want {
		scale = math.Max(scale, math.Abs(want[i]))
	}
	for i := range want {
		d := math.Abs(got[i] - want[i])
		if math.IsNaN(got[i]) {
			d = math.Inf(1)
		}
		if d > worst {
			worst, at = d, i
		}
	}
	return worst / math.Max(scale, 1e-6), at
}

func TestGPU(t *testing.T) {
	ctx, err := runtime.NewContext(0)
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	defer ctx.Close()
	for _, c := range testConfigs(t) {
		if *gpuSpecs != "" && !strings.Contains(","+*gpuSpecs+",", ","+c.spec+",") || !strings.Contains(*gpuPlans, c.plan) || *gpuS != 0 && c.dims["S"] != *gpuS {
			continue
		}
		t.Run(c.String(), func(t *testing.T) { gpuRun(t, ctx, c) })
	}
}

func gpuRun(t *testing.T, ctx *runtime.Context, c testConfig) {
	release, err := ctx.Bind()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	g, full := c.graph, c.dims
	inputs, err := interp.RandomInputs(g, full, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := interp.Run(g, full, inputs, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := c.plan_
	m, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(m.Source))
	cubin, err := os.ReadFile(filepath.Join(*gpuCubins, hex.EncodeToString(sum[:])+".cubin"))
	if err != nil {
		t.Fatalf("%v (compile it with go test -tags nvrtc -run NVRTC -cubin.dir)", err)
	}
	mod, err := ctx.LoadImage(cubin)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Unload()
	stream, err := ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Destroy()
	pg := p.Graph
	// Buffers: every leaf and every kernel output buffer.
	bufs := map[*ir.Value]runtime.Buffer{}
	defer func() {
		for _, b := range bufs {
			b.Free()
		}
	}()
	byID := map[int]*interp.Tensor{}
	for v, x := range ref.Values {
		byID[v.ID] = x
	}
	sh := func(v *ir.Value) []int {
		s, err := v.Type.Shape.Eval(full)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	appendS := map[*ir.Value]int{}
	for _, n := range pg.Nodes {
		if n.Op == ir.OpAppend {
			appendS[n.Args[0]] = sh(n.Args[1])[2]
		}
	}
	upload := func(v *ir.Value, data []float64) {
		b, err := ctx.Alloc(int64(len(data))*v.Type.DType.Size() + 256)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.CopyIn(encode(v.Type.DType, data)); err != nil {
			t.Fatal(err)
		}
		bufs[v] = b
	}
	for _, group := range [][]*ir.Value{pg.Inputs, pg.Params, pg.States} {
		for _, v := range group {
			x := inputs[v.Name]
			if s, ok := appendS[v]; ok && (v.Def.Attr.Layout == nil || v.Def.Attr.Layout.Kind == ir.Contiguous) {
				// Contiguous caches have room for the S new tokens.
				d := sh(v)
				T := d[3]
				y := make([]float64, d[0]*d[1]*d[2]*(T+s)*d[4])
				for plane := 0; plane < d[0]*d[1]*d[2]; plane++ {
					copy(y[plane*(T+s)*d[4]:], x.Data[plane*T*d[4]:(plane+1)*T*d[4]])
				}
				upload(v, y)
				continue
			}
			upload(v, x.Data)
		}
	}
	for _, k := range p.Kernels {
		for _, o := range k.Outputs {
			buf := codegen.Buffer(o)
			if _, ok := bufs[buf]; ok {
				continue
			}
			n, err := plan.Bytes(buf, full)
			if err != nil {
				t.Fatal(err)
			}
			b, err := ctx.Alloc(n + 256)
			if err != nil {
				t.Fatal(err)
			}
			bufs[buf] = b
		}
	}
	for i, k := range p.Kernels {
		mk := m.Kernels[i]
		var args []any
		for _, pa := range mk.Params {
			if pa.Value != nil {
				b, ok := bufs[pa.Value]
				if !ok {
					t.Fatalf("kernel %s: no buffer for %s", k.Name, pa.Value.Ref())
				}
				args = append(args, b.Ptr)
			} else {
				args = append(args, full[pa.Dim])
			}
		}
		for _, e := range mk.Entries {
			kern, err := mod.Kernel(e)
			if err != nil {
				t.Fatal(err)
			}
			if err := runtime.Launch(kern, k.Launch.Grid, mk.Block, 0, stream, args...); err != nil {
				t.Fatalf("%s: %v", e, err)
			}
		}
		if err := stream.Synchronize(); err != nil {
			t.Fatalf("kernel %s: %v", k.Name, err)
		}
		// Compare the kernel's outputs that the reference has.
		for _, o := range k.Outputs {
			want, ok := byID[o.ID]
			if !ok || plan.InCache(o) || !want.SameShape(sh(o)) {
				continue
			}
			raw := make([]byte, int64(len(want.Data))*o.Type.DType.Size())
			if err := bufs[o].CopyOut(raw); err != nil {
				t.Fatal(err)
			}
			got := decode(o.Type.DType, raw)
			e, at := maxErr(got, want.Data)
			if e > 3e-2 {
				t.Errorf("kernel %s output %s: max error %.3g at %d (got %g want %g)", k.Name, o.Ref(), e, at, got[at], want.Data[at])
			}
		}
	}
	for _, o := range pg.Outputs {
		want := ref.Outputs[o.Name]
		raw := make([]byte, int64(len(want.Data))*o.Type.DType.Size())
		if err := bufs[o].CopyOut(raw); err != nil {
			t.Fatal(err)
		}
		e, at := maxErr(decode(o.Type.DType, raw), want.Data)
		t.Logf("output %s: max relative error %.3g (at %d)", o.Name, e, at)
		if e > 3e-2 {
			t.Errorf("output %s: max error %.3g", o.Name, e)
		}
	}
	for _, v := range pg.States {
		want := ref.States[v.Name]
		raw := make([]byte, int64(len(want.Data))*v.Type.DType.Size())
		if err := bufs[v].CopyOut(raw); err != nil {
			t.Fatal(err)
		}
		e, at := maxErr(decode(v.Type.DType, raw), want.Data)
		t.Logf("state %s: max relative error %.3g (at %d)", v.Name, e, at)
		if e > 3e-2 {
			t.Errorf("state %s: max error %.3g", v.Name, e)
		}
	}
}
