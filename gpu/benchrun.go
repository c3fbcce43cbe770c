//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/runtime"
)

// BenchOptions control the timing loops.
type BenchOptions struct {
	// Warmup launches before timing, Reps timed launches (each between two
	// CUDA events, all queued behind a hold kernel so that the GPU runs
	// them back to back; the median is reported).
	Warmup, Reps int
	// Seed seeds the random leaves.
	Seed int64
}

// Bench measures a loaded plan.
type Bench struct {
	D    *Device
	Opt  BenchOptions
	Ceil Ceilings
	L2   int64
}

// events makes n pairs of timing events.
func (b *Bench) events(n int) (start, end []*runtime.Event, free func(), err error) {
	free = func() {
		for _, e := range append(start, end...) {
			e.Destroy()
		}
	}
	for range n {
		s, err1 := b.D.Ctx.NewEvent()
		e, err2 := b.D.Ctx.NewEvent()
		if err := errors.Join(err1, err2); err != nil {
			free()
			return nil, nil, nil, err
		}
		start, end = append(start, s), append(end, e)
	}
	return start, end, free, nil
}

// Time runs f warm-up times, then Reps times between event pairs (f gets
// the repetition), all queued behind a hold kernel, and returns the
// median and the minimum in µs.
func (b *Bench) Time(f func(rep int) error) (median, minimum float64, err error) {
	s := b.D.Stream
	for i := range b.Opt.Warmup {
		if err := f(i); err != nil {
			return 0, 0, err
		}
	}
	n := max(b.Opt.Reps, 1)
	start, end, free, err := b.events(n)
	if err != nil {
		return 0, 0, err
	}
	defer free()
	if err := b.hold(n); err != nil {
		return 0, 0, err
	}
	for i := range n {
		if err := start[i].Record(s); err != nil {
			return 0, 0, err
		}
		if err := f(b.Opt.Warmup + i); err != nil {
			return 0, 0, err
		}
		if err := end[i].Record(s); err != nil {
			return 0, 0, err
		}
	}
	if err := s.Synchronize(); err != nil {
		return 0, 0, err
	}
	us := make([]float64, n)
	for i := range n {
		ms, err := runtime.Elapsed(start[i], end[i])
		if err != nil {
			return 0, 0, err
		}
		us[i] = ms * 1e3
	}
	slices.Sort(us)
	return us[n/2], us[0], nil
}

// holdPerRep is how long the hold kernel waits per timed repetition: more
// than the host takes to queue one (two event records and the launches).
const holdPerRep = 50 * time.Microsecond

// hold launches HoldSource's kernel for reps repetitions' worth of queueing.
func (b *Bench) hold(reps int) error {
	m, err := b.D.Module(HoldSource)
	if err != nil {
		return fmt.Errorf("hold kernel: %w", err)
	}
	k, err := m.Kernel("fz_hold")
	if err != nil {
		return err
	}
	return runtime.Launch(k, [3]int64{1, 1, 1}, 32, 0, b.D.Stream, int64(time.Duration(reps)*holdPerRep))
}

// MeasureCeilings measures the copy bandwidth and the GEMM rates.
func (b *Bench) MeasureCeilings(info runtime.DeviceInfo) error {
	const n = 1 << 30
	src, err := b.D.Ctx.Alloc(n)
	if err != nil {
		return err
	}
	defer src.Free()
	dst, err := b.D.Ctx.Alloc(n)
	if err != nil {
		return err
	}
	defer dst.Free()
	if err := src.Memset(0, n, 0x3c); err != nil {
		return err
	}
	if err := b.D.Ctx.Synchronize(); err != nil {
		return err
	}
	med, _, err := b.Time(func(int) error { return runtime.CopyDtoD(dst.Ptr, src.Ptr, n, b.D.Stream) })
	if err != nil {
		return fmt.Errorf("copy ceiling: %w", err)
	}
	b.Ceil.CopyTBps = 2 * n / med / 1e6

	m, err := b.D.Module(MMAPeakSource)
	if err != nil {
		return fmt.Errorf("mma.sync ceiling: %w", err)
	}
	k, err := m.Kernel("fz_mma_peak")
	if err != nil {
		return err
	}
	blocks, threads, iters := int64(info.SMs*4), int64(256), int64(8192)
	out, err := b.D.Ctx.Alloc(blocks * threads * 4)
	if err != nil {
		return err
	}
	defer out.Free()
	med, _, err = b.Time(func(int) error {
		return runtime.Launch(k, [3]int64{blocks, 1, 1}, int(threads), 0, b.D.Stream, out.Ptr, int32(iters))
	})
	if err != nil {
		return fmt.Errorf("mma.sync ceiling: %w", err)
	}
	b.Ceil.MMASyncTFLOPs = float64(MMAPeakFlops(blocks, threads, iters)) / med / 1e6
	b.Ceil.GemmTFLOPs, b.Ceil.GemmSource = b.Ceil.MMASyncTFLOPs, "mma.sync register loop (fz_mma_peak, no cuBLAS)"

	if err := b.generatedGemm(); err != nil {
		b.Ceil.GeneratedGemmNote = err.Error()
	} else if b.Ceil.GeneratedGemmTFLOPs > b.Ceil.GemmTFLOPs {
		b.Ceil.GemmTFLOPs, b.Ceil.GemmSource = b.Ceil.GeneratedGemmTFLOPs, "our generated GEMM kernel, 8192³ bf16"
	}
	return nil
}

// generatedGemm times codegen/cuda's GEMM on CeilingGemm.
func (b *Bench) generatedGemm() error {
	p, err := CeilingPlan()
	if err != nil {
		return err
	}
	if !p.Generated() {
		return fmt.Errorf("not generated: %v", p.Kernels[0].Err)
	}
	l, err := b.D.Load(p)
	if err != nil {
		return err
	}
	in, err := l.Alloc()
	if err != nil {
		return err
	}
	defer in.Free()
	for i := range in.Own {
		if err := in.Own[i].Memset(0, in.Own[i].Bytes, 0x3c); err != nil {
			return err
		}
	}
	if err := b.D.Ctx.Synchronize(); err != nil {
		return err
	}
	med, _, err := b.Time(func(int) error { return l.Forward(in, b.D.Stream) })
	if err != nil {
		return err
	}
	m := float64(CeilingGemmDims["M"])
	b.Ceil.GeneratedGemmTFLOPs = 2 * m * 8192 * 8192 / med / 1e6
	return nil
}

// Inputs are random leaves for a plan (interp.RandomInputs: valid page
// tables and positions), every sequence of a paged or ragged cache at its
// full length, so that a batch moves the bytes the cost model counts.
func (b *Bench) Inputs(p *Plan) (*Reference, error) {
	inputs, err := interp.RandomInputsWith(p.Graph, p.Dims, b.Opt.Seed, interp.RandomOptions{FullLengths: true})
	if err != nil {
		return nil, err
	}
	return &Reference{P: p, Inputs: inputs}, nil
}

// Plan measures every kernel of l and the whole step, which leaves the
// load stage out (it runs once, at load). leaves holds the inputs; the
// arena is zeroed and the generated kernels, the load stage's first, are
// run once in order so that every kernel reads the values of a step.
func (b *Bench) Plan(l *Loaded, leaves *Reference) (PlanBench, error) {
	p := l.P
	pb := PlanBench{Plan: PlanName(p.Fused)}
	costs, err := p.Plan.Costs(p.Dims)
	if err != nil {
		return pb, err
	}
	total := plan.Total(costs)
	pb.ModelBytes, pb.ModelFlops = total.Bytes(), total.Flops
	in, err := l.Prepare(leaves)
	if err != nil {
		return pb, err
	}
	defer in.Free()
	if err := b.D.Ctx.Synchronize(); err != nil {
		return pb, err
	}
	for i := range p.Kernels {
		if l.Generated(i) {
			if err := l.Launch(in, i, b.D.Stream); err != nil {
				return pb, err
			}
		}
	}
	if err := b.D.Stream.Synchronize(); err != nil {
		return pb, err
	}
	for i, k := range p.Kernels {
		kt := b.kernelTime(k, costs[i])
		if k.Err != nil {
			kt.Skipped = k.Err.Error()
		} else if err := b.timeKernel(l, in, i, &kt); err != nil {
			return pb, fmt.Errorf("%s: %w", k.Plan.Name, err)
		}
		pb.add(kt)
	}
	pb.Step.FloorUs = b.floorUs(total.Bytes(), total.Flops)
	if !p.Generated() {
		pb.Step.Skipped = "not every kernel is generated: " + notGeneratedNames(p)
		return pb, nil
	}
	return pb, b.timeStep(l, in, &pb.Step)
}

func notGeneratedNames(p *Plan) string {
	var s string
	for _, k := range p.Kernels {
		if k.Err != nil {
			if s != "" {
				s += ", "
			}
			s += k.Plan.Name
		}
	}
	return s
}

func (b *Bench) floorUs(bytes, flops int64) float64 {
	f := 0.0
	if b.Ceil.CopyTBps > 0 {
		f = float64(bytes) / b.Ceil.CopyTBps / 1e6
	}
	if b.Ceil.GemmTFLOPs > 0 {
		f = max(f, float64(flops)/b.Ceil.GemmTFLOPs/1e6)
	}
	return f
}

func (b *Bench) kernelTime(k *Kernel, c plan.Cost) KernelTime {
	kt := KernelTime{Name: k.Plan.Name, Strategy: k.Plan.Strategy.String(), Bytes: c.Bytes(), Flops: c.Flops, Launches: c.Launches, Load: k.Plan.Load}
	if l := k.Plan.Launch; l != nil {
		kt.Variant, kt.Grid, kt.Block = l.Variant.String(), l.Grid, l.Block
	}
	if k.Err == nil {
		kt.Block = k.CUDA.Block
	}
	kt.FloorUs = b.floorUs(kt.Bytes, kt.Flops)
	return kt
}

const align = 256

func alignUp(n int64) int64 { return (n + align - 1) / align * align }

// timeKernel times kernel i on Rotation copies of its buffers, filled from
// the instance.
func (b *Bench) timeKernel(l *Loaded, in *Instance, i int, kt *KernelTime) error {
	k := l.P.Kernels[i]
	var vals []*ir.Value
	var size int64
	for _, prm := range k.CUDA.Params {
		if prm.Value != nil && !slices.Contains(vals, prm.Value) {
			vals = append(vals, prm.Value)
			_, _, n, err := in.where(prm.Value)
			if err != nil {
				return err
			}
			size += alignUp(n)
		}
	}
	rot := int64(1)
	if size > 0 {
		rot = min(max(1, (3*b.L2+size-1)/size), 1024)
	}
	pool, err := b.D.Ctx.Alloc(rot * size)
	if err != nil {
		return err
	}
	defer pool.Free()
	// Copy r of value j lives at r*size + the offset of j.
	offs := map[*ir.Value]int64{}
	var off int64
	for _, v := range vals {
		buf, voff, n, _ := in.where(v)
		offs[v] = off
		for r := range rot {
			if err := runtime.CopyDtoD(pool.At(r*size+off), buf.At(voff), n, b.D.Stream); err != nil {
				return err
			}
		}
		off += alignUp(n)
	}
	argsOf := func(r int64) ([]any, error) {
		var args []any
		for _, prm := range k.CUDA.Params {
			switch {
			case prm.Value != nil:
				args = append(args, pool.At(r*size+offs[prm.Value]))
			case prm.Dim != "":
				args = append(args, l.P.Dims[prm.Dim])
			case prm.Map != nil:
				m, err := encodeMap(prm.Map, func(v *ir.Value) (runtime.DevicePtr, error) {
					o, ok := offs[v]
					if !ok {
						return 0, fmt.Errorf("map parameter %s: %s is not a buffer parameter", prm.Name, v.Ref())
					}
					return pool.At(r*size + o), nil
				})
				if err != nil {
					return nil, err
				}
				args = append(args, m)
			default:
				return nil, fmt.Errorf("parameter %s is neither a buffer, a dim nor a map", prm.Name)
			}
		}
		return args, nil
	}
	all := make([][]any, rot)
	for r := range rot {
		if all[r], err = argsOf(r); err != nil {
			return err
		}
	}
	lp := k.Plan.Launch
	entries := l.entries[i]
	med, mn, err := b.Time(func(rep int) error {
		args := all[int64(rep)%rot]
		for _, e := range entries {
			if err := runtime.LaunchWith(e, lp.Grid, k.CUDA.Block, lp.SharedBytes, launchOpts(lp, false), b.D.Stream, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	kt.MedianUs, kt.MinUs, kt.Rotation = med, mn, int(rot)
	kt.TBps = float64(kt.Bytes) / med / 1e6
	kt.TFLOPs = float64(kt.Flops) / med / 1e6
	if b.Ceil.CopyTBps > 0 {
		kt.BWFrac = kt.TBps / b.Ceil.CopyTBps
	}
	if b.Ceil.GemmTFLOPs > 0 {
		kt.FlopFrac = kt.TFLOPs / b.Ceil.GemmTFLOPs
	}
	if kt.FloorUs > 0 {
		kt.OfFloor = kt.FloorUs / med
	}
	return nil
}

// timeStep times the whole step eagerly and as graph replays, rotating
// over instances copied from in.
func (b *Bench) timeStep(l *Loaded, in *Instance, st *StepTime) error {
	rot := Rotation(in.Bytes(), b.L2)
	insts := []*Instance{in}
	defer func() {
		for _, x := range insts[1:] {
			x.Free()
		}
	}()
	for len(insts) < rot {
		x, err := l.Alloc()
		if err != nil {
			return err
		}
		insts = append(insts, x)
		for j := range in.Own {
			if err := runtime.CopyDtoD(x.Own[j].Ptr, in.Own[j].Ptr, in.Own[j].Bytes, b.D.Stream); err != nil {
				return err
			}
		}
		if err := runtime.CopyDtoD(x.Arena.Ptr, in.Arena.Ptr, in.Arena.Bytes, b.D.Stream); err != nil {
			return err
		}
	}
	st.Rotation = rot
	var err error
	if st.EagerUs, _, err = b.Time(func(rep int) error { return l.Forward(insts[rep%rot], b.D.Stream) }); err != nil {
		return fmt.Errorf("eager step: %w", err)
	}
	graphs := make([]*runtime.GraphExec, rot)
	defer func() {
		for _, g := range graphs {
			if g != nil {
				g.Destroy()
			}
		}
	}()
	for r := range rot {
		x := insts[r]
		if graphs[r], err = runtime.Capture(b.D.Stream, func() error { return l.Forward(x, b.D.Stream) }); err != nil {
			return fmt.Errorf("capture: %w", err)
		}
	}
	if st.GraphUs, _, err = b.Time(func(rep int) error { return graphs[rep%rot].Launch(b.D.Stream) }); err != nil {
		return fmt.Errorf("graph replay: %w", err)
	}
	return nil
}
