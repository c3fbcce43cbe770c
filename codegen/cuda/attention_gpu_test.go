//go:build cuda

package cuda

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/ir/interp"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/runtime"
)

// The attention GPU test runs the attention kernels of the test variants
// (attention_flash_cases_test.go) on a GPU and compares their output with
// the reference interpreter's FlashAttention (interp.RunPlan): the plan's
// launch, the decode entries at other split counts (one launch
// configuration serves any length), and the prefill entry. The machine
// needs no NVRTC: the cubins come from TestFlashNVRTC -flash.cubins.
//
//	go test -tags nvrtc -run TestFlashNVRTC ./codegen/cuda -flash.cubins DIR
//	go test -c -tags cuda -o flash.test ./codegen/cuda
//	./flash.test -test.run TestFlashGPU -flash.gpu.cubins DIR

var (
	flashGPUCubins = flag.String("flash.gpu.cubins", "testdata/flashcubin", "directory of the cubins TestFlashNVRTC wrote with -flash.cubins")
	flashGPUCases  = flag.String("flash.gpu.cases", "", "regexp of the TestFlashGPU cases to run (default all)")
	flashGPUReport = flag.String("flash.gpu.report", "", "append one line per launch (case, launch, max errors) to this file")
	flashGPUBench  = flag.Bool("flash.gpu.bench", false, "time the attention kernels of llama3_8b and gemma2_softcap at decode and prefill dims")
	flashGPUTol    = flag.Float64("flash.gpu.tol", 2e-2, "largest accepted error, relative to the largest reference output")
)

func flashEncode(dt ir.DType, xs []float64) []byte {
	out := make([]byte, int64(len(xs))*dt.Size())
	for i, x := range xs {
		switch dt {
		case ir.BF16:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(math.Float32bits(float32(interp.RoundBF16(x)))>>16))
		case ir.F16:
			binary.LittleEndian.PutUint16(out[2*i:], flashF16Bits(interp.RoundF16(x)))
		case ir.F32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(x)))
		case ir.I32:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(x)))
		default:
			panic("flashEncode: dtype " + dt.String())
		}
	}
	return out
}

func flashDecode(dt ir.DType, b []byte) []float64 {
	out := make([]float64, int64(len(b))/dt.Size())
	for i := range out {
		switch dt {
		case ir.BF16:
			out[i] = float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16))
		case ir.F16:
			out[i] = flashF16Value(binary.LittleEndian.Uint16(b[2*i:]))
		case ir.F32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		default:
			panic("flashDecode: dtype " + dt.String())
		}
	}
	return out
}

// flashF16Bits encodes an f16-representable value.
func flashF16Bits(x float64) uint16 {
	s := uint16(0)
	if x < 0 || x == 0 && math.Signbit(x) {
		s, x = 0x8000, -x
	}
	switch {
	case x == 0:
		return s
	case math.IsInf(x, 0) || x > 65504:
		return s | 0x7c00
	}
	e := int(math.Floor(math.Log2(x)))
	if e < -14 {
		return s | uint16(math.Round(x/math.Ldexp(1, -24)))
	}
	m := x/math.Ldexp(1, e) - 1
	return s | uint16(e+15)<<10 | uint16(math.Round(m*1024))
}

func flashF16Value(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e, m := int(h>>10&31), float64(h&1023)
	switch {
	case e == 0:
		return s * m * math.Ldexp(1, -24)
	case e == 31:
		if m != 0 {
			return math.NaN()
		}
		return s * math.Inf(1)
	}
	return s * (1 + m/1024) * math.Ldexp(1, e-15)
}

// flashGPU is a loaded attention module with its buffers.
type flashGPU struct {
	t      *testing.T
	ctx    *runtime.Context
	stream *runtime.Stream
	mod    *runtime.Module
	m      *Module
	pk     *plan.Kernel
	mk     Kernel
	args   []any
	out    runtime.Buffer
	outDT  ir.DType
	bufs   []runtime.Buffer
}

func (f *flashGPU) close() {
	for i := range f.bufs {
		f.bufs[i].Free()
	}
	if f.mod != nil {
		f.mod.Unload()
	}
}

// loadFlash generates and loads the module of c's attention kernel and
// uploads its inputs: the leaves, the states after the step and the values
// earlier kernels computed, from the reference run.
func loadFlash(t *testing.T, ctx *runtime.Context, stream *runtime.Stream, c flashCase, inputs map[string]*interp.Tensor, ref *interp.Result) *flashGPU {
	t.Helper()
	m, err := Generate(c.plan)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(m.Source))
	cubin, err := os.ReadFile(filepath.Join(*flashGPUCubins, hex.EncodeToString(sum[:])+".cubin"))
	if err != nil {
		t.Fatalf("%v (compile it with go test -tags nvrtc -run TestFlashNVRTC -flash.cubins)", err)
	}
	f := &flashGPU{t: t, ctx: ctx, stream: stream, m: m, pk: c.plan.Kernels[0], mk: m.Kernels[0]}
	if f.mod, err = ctx.LoadImage(cubin); err != nil {
		t.Fatal(err)
	}
	byID := map[int]*interp.Tensor{}
	for v, x := range ref.Values {
		byID[v.ID] = x
	}
	for _, p := range f.mk.Params {
		if p.Value == nil {
			f.args = append(f.args, c.dims[p.Dim])
			continue
		}
		v := p.Value
		var data *interp.Tensor
		switch {
		case p.Written:
		case v.Def != nil && v.Def.Op == ir.OpState:
			data = ref.States[v.Name]
		case inputs[v.Name] != nil && v.Def != nil && v.Def.Op.IsLeaf():
			data = inputs[v.Name]
		default:
			data = byID[v.ID]
		}
		var b runtime.Buffer
		if p.Written {
			n, err := plan.Bytes(v, c.dims)
			if err != nil {
				t.Fatal(err)
			}
			if b, err = ctx.Alloc(n); err != nil {
				t.Fatal(err)
			}
			f.out, f.outDT = b, v.Type.DType
		} else {
			if data == nil {
				t.Fatalf("no data for parameter %s (%s)", p.Name, v.Ref())
			}
			raw := flashEncode(v.Type.DType, data.Data)
			if b, err = ctx.Alloc(int64(len(raw)) + 256); err != nil {
				t.Fatal(err)
			}
			if err := b.CopyIn(raw); err != nil {
				t.Fatal(err)
			}
		}
		f.bufs = append(f.bufs, b)
		f.args = append(f.args, b.Ptr)
	}
	if f.out.Ptr == 0 {
		t.Fatal("no output buffer")
	}
	return f
}

// run launches entries in order with grid, after filling the output with
// NaN (0xff bytes), and returns the output.
func (f *flashGPU) run(entries []string, grid [3]int64) []float64 {
	t := f.t
	t.Helper()
	if err := f.out.Memset(0, f.out.Bytes, 0xff); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		k, err := f.mod.Kernel(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := runtime.Launch(k, grid, f.mk.Block, 0, f.stream, f.args...); err != nil {
			t.Fatalf("%s: %v", e, err)
		}
	}
	if err := f.stream.Synchronize(); err != nil {
		t.Fatalf("%v: %v", entries, err)
	}
	raw := make([]byte, f.out.Bytes)
	if err := f.out.CopyOut(raw); err != nil {
		t.Fatal(err)
	}
	return flashDecode(f.outDT, raw)
}

// decodeEntries and prefillEntry are the entries of the kernel's decode
// variant (with its merge) and its prefill variant.
func (f *flashGPU) decodeEntries() []string {
	d := f.mk.Variants["decode"][0]
	return []string{d, d + mergeSuffix}
}

func (f *flashGPU) prefillEntry() []string { return f.mk.Variants["prefill"] }

// flashErr is the largest |got - want| (NaN counts as infinite) and the
// same relative to the largest |want|.
func flashErr(got, want []float64) (abs, rel float64, at int) {
	scale := 0.0
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	at = -1
	for i := range want {
		d := math.Abs(got[i] - want[i])
		if math.IsNaN(d) {
			d = math.Inf(1)
		}
		if d > abs || at < 0 {
			abs, at = d, i
		}
	}
	return abs, abs / math.Max(scale, 1e-6), at
}

func TestFlashGPU(t *testing.T) {
	ctx, err := runtime.NewContext(0)
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	defer ctx.Close()
	stream, err := ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Destroy()
	var report *os.File
	if *flashGPUReport != "" {
		if report, err = os.OpenFile(*flashGPUReport, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
			t.Fatal(err)
		}
		defer report.Close()
	}
	var sel *regexp.Regexp
	if *flashGPUCases != "" {
		sel = regexp.MustCompile(*flashGPUCases)
	}
	worst := map[string]float64{}
	for i, c := range flashCases(t) {
		if sel != nil && !sel.MatchString(c.name) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			release, err := ctx.Bind() // the subtest's goroutine
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			inputs, err := interp.RandomInputs(c.graph, c.dims, int64(i+1))
			if err != nil {
				t.Fatal(err)
			}
			ref, err := interp.RunPlan(c.full, c.dims, inputs, interp.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := ref.Outputs["o"].Data
			f := loadFlash(t, ctx, stream, c, inputs, ref)
			defer f.close()
			l := f.pk.Launch
			at := f.pk.Nodes[0]
			qs, err := at.Args[0].Type.Shape.Eval(c.dims)
			if err != nil {
				t.Fatal(err)
			}
			kvs, err := at.Args[len(at.Args)-2].Type.Shape.Eval(c.dims)
			if err != nil {
				t.Fatal(err)
			}
			b, h, g, s := int64(qs[0]), int64(qs[1]), int64(kvs[1]), int64(qs[2])
			type launch struct {
				name    string
				entries []string
				grid    [3]int64
			}
			launches := []launch{{"plan " + l.String(), f.mk.Entries, l.Grid}}
			for _, x := range []int64{1, 3, 40} {
				launches = append(launches, launch{fmt.Sprintf("decode grid(%d,%d,%d)", x, g, b), f.decodeEntries(), [3]int64{x, g, b}})
			}
			launches = append(launches,
				launch{fmt.Sprintf("prefill grid(%d,%d,%d)", (s+127)/128, h, b), f.prefillEntry(), [3]int64{(s + 127) / 128, h, b}},
				launch{"prefill grid(1,1,1)", f.prefillEntry(), [3]int64{1, 1, 1}},
				launch{"decode grid(2,1,1)", f.decodeEntries(), [3]int64{2, 1, 1}})
			for _, la := range launches {
				got := f.run(la.entries, la.grid)
				abs, rel, at := flashErr(got, want)
				line := fmt.Sprintf("%-60s %-40s max abs err %.3g, rel %.3g", c.name, la.name, abs, rel)
				t.Log(line)
				if report != nil {
					fmt.Fprintln(report, line)
				}
				variant := strings.SplitN(c.name, "/", 2)[0]
				worst[variant] = math.Max(worst[variant], abs)
				if !(rel <= *flashGPUTol) {
					t.Errorf("%s: max error %.3g (relative %.3g) at %d: got %g, want %g", la.name, abs, rel, at, got[at], want[at])
				}
			}
		})
	}
	for v, e := range worst {
		line := fmt.Sprintf("variant %-20s worst max abs error %.3g", v, e)
		t.Log(line)
		if report != nil {
			fmt.Fprintln(report, line)
		}
	}
}

// TestFlashGPUBench times the attention kernels of the shipped specs at
// the decode and prefill dims of specFlashDims (-flash.gpu.bench).
func TestFlashGPUBench(t *testing.T) {
	if !*flashGPUBench {
		t.Skip("-flash.gpu.bench not set")
	}
	ctx, err := runtime.NewContext(0)
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	defer ctx.Close()
	stream, err := ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Destroy()
	start, _ := ctx.NewEvent()
	end, _ := ctx.NewEvent()
	for _, c := range specFlashCases(t) {
		if len(c.plan.Kernels) == 0 || !(strings.HasPrefix(c.name, "llama3_8b/") || strings.HasPrefix(c.name, "gemma2_softcap/")) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			release, err := ctx.Bind() // the subtest's goroutine
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			// Zeroed device contents: timing only.
			m, err := Generate(c.plan)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(m.Source))
			cubin, err := os.ReadFile(filepath.Join(*flashGPUCubins, hex.EncodeToString(sum[:])+".cubin"))
			if err != nil {
				t.Fatal(err)
			}
			mod, err := ctx.LoadImage(cubin)
			if err != nil {
				t.Fatal(err)
			}
			defer mod.Unload()
			pk, mk := c.plan.Kernels[0], m.Kernels[0]
			var args []any
			var bufs []runtime.Buffer
			defer func() {
				for i := range bufs {
					bufs[i].Free()
				}
			}()
			for _, p := range mk.Params {
				if p.Value == nil {
					args = append(args, c.dims[p.Dim])
					continue
				}
				n, err := plan.Bytes(p.Value, c.dims)
				if err != nil {
					t.Fatal(err)
				}
				for _, nd := range c.plan.Graph.Nodes {
					if nd.Op == ir.OpAppend && nd.Args[0] == p.Value {
						// A contiguous cache appended to holds T + S tokens.
						if n, err = plan.Bytes(nd.Outs[0], c.dims); err != nil {
							t.Fatal(err)
						}
						n *= 2
					}
				}
				b, err := ctx.Alloc(n + 256)
				if err != nil {
					t.Fatal(err)
				}
				bufs = append(bufs, b)
				args = append(args, b.Ptr)
			}
			var ks []*runtime.Kernel
			for _, e := range mk.Entries {
				k, err := mod.Kernel(e)
				if err != nil {
					t.Fatal(err)
				}
				ks = append(ks, k)
			}
			l := pk.Launch
			launch := func() {
				for _, k := range ks {
					if err := runtime.Launch(k, l.Grid, mk.Block, 0, stream, args...); err != nil {
						t.Fatal(err)
					}
				}
			}
			launch()
			const reps = 20
			start.Record(stream)
			for range reps {
				launch()
			}
			end.Record(stream)
			if err := end.Synchronize(); err != nil {
				t.Fatal(err)
			}
			ms, _ := runtime.Elapsed(start, end)
			us := ms * 1000 / reps
			at := pk.Nodes[0]
			qs, _ := at.Args[0].Type.Shape.Eval(c.dims)
			ks4, _ := at.Args[len(at.Args)-2].Type.Shape.Eval(c.dims)
			B, H, S, Dh, G, T := int64(qs[0]), int64(qs[1]), int64(qs[2]), int64(qs[3]), int64(ks4[1]), int64(ks4[2])
			kvBytes := float64(2 * B * G * T * Dh * 2)
			flops := float64(4 * B * H * S * T * Dh)
			if at.Attr.Attn.Causal && S > 1 {
				flops /= 2
			}
			line := fmt.Sprintf("%-45s %-40s %9.1f us  K/V %7.1f GB/s  %7.1f TFLOP/s", c.name, l.String(), us, kvBytes/us/1e3, flops/us/1e6)
			t.Log(line)
			if *flashGPUReport != "" {
				if fr, err := os.OpenFile(*flashGPUReport, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
					fmt.Fprintln(fr, line)
					fr.Close()
				}
			}
		})
	}
}
