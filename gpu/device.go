//go:build cuda

package gpu

import (
	"errors"
	"fmt"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/runtime"
)

// Device runs plans on one GPU: a context, a stream, and the modules loaded
// so far by image key.
type Device struct {
	Ctx    *runtime.Context
	Stream *runtime.Stream
	Images *Images
	// Mutation, when set, corrupts every eager launch of a kernel it names
	// (a mutation run; see Mutation).
	Mutation *Mutation
	modules  map[string]*runtime.Module
}

// NewDevice makes a context on device 0 (locking the calling goroutine to
// its thread: see runtime.NewContext) and a stream.
func NewDevice(images *Images) (*Device, error) {
	ctx, err := runtime.NewContext(0)
	if err != nil {
		return nil, err
	}
	s, err := ctx.NewStream()
	if err != nil {
		return nil, errors.Join(err, ctx.Close())
	}
	return &Device{Ctx: ctx, Stream: s, Images: images, modules: map[string]*runtime.Module{}}, nil
}

// Close destroys the context and everything in it.
func (d *Device) Close() error { return d.Ctx.Close() }

// Module loads (once) the module of a CUDA source.
func (d *Device) Module(src string) (*runtime.Module, error) {
	key := ImageKey(src)
	if m, ok := d.modules[key]; ok {
		return m, nil
	}
	img, err := d.Images.Load(src)
	if err != nil {
		return nil, err
	}
	m, err := d.Ctx.LoadImage(img)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", key, err)
	}
	d.modules[key] = m
	return m, nil
}

// Loaded is a plan whose generated kernels are loaded.
type Loaded struct {
	D      *Device
	P      *Plan
	Layout *Layout
	// entries and modules follow P.Kernels; nil for a kernel not
	// generated.
	entries [][]*runtime.Kernel
	modules []*runtime.Module
}

// Load loads p's generated kernels.
func (d *Device) Load(p *Plan) (*Loaded, error) {
	lay, err := NewLayout(p)
	if err != nil {
		return nil, err
	}
	l := &Loaded{D: d, P: p, Layout: lay, entries: make([][]*runtime.Kernel, len(p.Kernels)), modules: make([]*runtime.Module, len(p.Kernels))}
	for i, k := range p.Kernels {
		if k.Err != nil {
			continue
		}
		m, err := d.Module(k.Source)
		if err != nil {
			return nil, fmt.Errorf("kernel %s: %w", k.Plan.Name, err)
		}
		l.modules[i] = m
		for _, e := range k.CUDA.Entries {
			fn, err := m.Kernel(e)
			if err != nil {
				return nil, err
			}
			l.entries[i] = append(l.entries[i], fn)
		}
	}
	return l, nil
}

// Instance is one set of device buffers for a loaded plan.
type Instance struct {
	L     *Loaded
	Own   []runtime.Buffer
	Arena runtime.Buffer
}

// Prepare allocates an instance holding leaves' inputs and states, its
// arena zeroed: the buffers of a step about to run. The caller frees it.
func (l *Loaded) Prepare(leaves *Reference) (*Instance, error) {
	in, err := l.Alloc()
	if err != nil {
		return nil, err
	}
	if err := in.Reset(leaves); err != nil {
		return nil, errors.Join(err, in.Free())
	}
	if err := in.Arena.Memset(0, in.Arena.Bytes, 0); err != nil {
		return nil, errors.Join(err, in.Free())
	}
	return in, nil
}

// Alloc allocates an instance (zeroed).
func (l *Loaded) Alloc() (*Instance, error) {
	in := &Instance{L: l}
	for _, b := range l.Layout.Own {
		buf, err := l.D.Ctx.Alloc(b.Bytes)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("%s %s: %w", b.Role, b.Value.Name, err), in.Free())
		}
		in.Own = append(in.Own, buf)
	}
	var err error
	if in.Arena, err = l.D.Ctx.Alloc(l.Layout.ArenaBytes); err != nil {
		return nil, errors.Join(fmt.Errorf("arena: %w", err), in.Free())
	}
	return in, nil
}

// Free releases the instance's buffers.
func (in *Instance) Free() error {
	var errs []error
	for i := range in.Own {
		errs = append(errs, in.Own[i].Free())
	}
	errs = append(errs, in.Arena.Free())
	return errors.Join(errs...)
}

// Bytes is the instance's device memory.
func (in *Instance) Bytes() int64 {
	n := in.Arena.Bytes
	for _, b := range in.Own {
		n += b.Bytes
	}
	return n
}

// where returns the buffer and offset of v.
func (in *Instance) where(v *ir.Value) (runtime.Buffer, int64, int64, error) {
	b, ok := in.L.Layout.Buf(v)
	if !ok {
		return runtime.Buffer{}, 0, 0, fmt.Errorf("%s has no device buffer", v.Ref())
	}
	if b.Index >= 0 {
		return in.Own[b.Index], 0, b.Bytes, nil
	}
	return in.Arena, b.Offset, b.Bytes, nil
}

// Ptr is v's device address.
func (in *Instance) Ptr(v *ir.Value) (runtime.DevicePtr, error) {
	buf, off, _, err := in.where(v)
	if err != nil {
		return 0, err
	}
	return buf.At(off), nil
}

// Upload writes data (at most the buffer's size) to v's buffer.
func (in *Instance) Upload(v *ir.Value, data []byte) error {
	buf, off, n, err := in.where(v)
	if err != nil {
		return err
	}
	if int64(len(data)) > n {
		return fmt.Errorf("%s: %d bytes for a %d-byte buffer", v.Ref(), len(data), n)
	}
	return buf.CopyInAt(off, data)
}

// Download reads v's whole buffer.
func (in *Instance) Download(v *ir.Value) ([]byte, error) {
	buf, off, n, err := in.where(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, n)
	return out, buf.CopyOutAt(off, out)
}

// Poison fills v's buffer with Poison.
func (in *Instance) Poison(v *ir.Value) error {
	buf, off, n, err := in.where(v)
	if err != nil {
		return err
	}
	return buf.Memset(off, n, Poison)
}

// PoisonAll fills every buffer but the leaves with Poison.
func (in *Instance) PoisonAll() error {
	for i, b := range in.L.Layout.Own {
		if b.Role == "output" || b.Role == "folded" {
			if err := in.Own[i].Memset(0, b.Bytes, Poison); err != nil {
				return err
			}
		}
	}
	return in.Arena.Memset(0, in.Arena.Bytes, Poison)
}

// Generated reports whether kernel i was generated.
func (l *Loaded) Generated(i int) bool { return l.entries[i] != nil }

// Launch enqueues every entry of kernel i on s with the plan's grid, shared
// memory and dependence and the CUDA block, as the generated Go launch code
// does; under a mutation that names the kernel, it then waits for s and
// scales what the kernel wrote (so not inside a graph capture).
func (l *Loaded) Launch(in *Instance, i int, s *runtime.Stream) error {
	k := l.P.Kernels[i]
	if l.entries[i] == nil {
		return fmt.Errorf("kernel %s was not generated: %w", k.Plan.Name, k.Err)
	}
	args, err := in.args(k)
	if err != nil {
		return err
	}
	lp := k.Plan.Launch
	for _, e := range l.entries[i] {
		if err := runtime.LaunchWith(e, lp.Grid, k.CUDA.Block, lp.SharedBytes, launchOpts(lp, lp.Dependent), s, args...); err != nil {
			return fmt.Errorf("%s (%s): %w", k.Plan.Name, lp.Variant, err)
		}
	}
	if m := l.D.Mutation; m != nil && m.Kernel.MatchString(k.Plan.Name) {
		return in.mutate(m, k, s)
	}
	return nil
}

// mutate scales every buffer but a state that kernel k writes by m, once s
// has run it.
func (in *Instance) mutate(m *Mutation, k *Kernel, s *runtime.Stream) error {
	if err := s.Synchronize(); err != nil {
		return fmt.Errorf("mutation of %s: %w", k.Plan.Name, err)
	}
	for _, w := range Written(k.Plan) {
		if IsState(w) {
			continue
		}
		b, err := in.Download(w)
		if err == nil {
			err = in.Upload(w, m.scaled(b, w.Type.DType))
		}
		if err != nil {
			return fmt.Errorf("mutation of %s: %w", k.Plan.Name, err)
		}
	}
	return nil
}

// launchOpts are the attributes of a launch of lp, a programmatic
// dependent of the kernel before it if dependent.
func launchOpts(lp *plan.Launch, dependent bool) runtime.LaunchOpts {
	return runtime.LaunchOpts{Dependent: dependent, Cluster: int(lp.Cluster)}
}

// args are kernel k's arguments in this instance.
func (in *Instance) args(k *Kernel) ([]any, error) {
	var args []any
	for _, prm := range k.CUDA.Params {
		switch {
		case prm.Value != nil:
			p, err := in.Ptr(prm.Value)
			if err != nil {
				return nil, fmt.Errorf("kernel %s: %w", k.Plan.Name, err)
			}
			args = append(args, p)
		case prm.Dim != "":
			args = append(args, in.L.P.Dims[prm.Dim])
		case prm.Map != nil:
			m, err := encodeMap(prm.Map, in.Ptr)
			if err != nil {
				return nil, fmt.Errorf("kernel %s: %w", k.Plan.Name, err)
			}
			args = append(args, m)
		default:
			return nil, fmt.Errorf("kernel %s: parameter %s is neither a buffer, a dim nor a map", k.Plan.Name, prm.Name)
		}
	}
	return args, nil
}

// encodeMap encodes the tensor map m of the buffers at ptr's addresses, as
// the generated Go launch code does.
func encodeMap(m *codegen.RowMap, ptr func(*ir.Value) (runtime.DevicePtr, error)) (runtime.TensorMap, error) {
	k, err := ptr(m.K)
	if err != nil {
		return runtime.TensorMap{}, err
	}
	v, err := ptr(m.V)
	if err != nil {
		return runtime.TensorMap{}, err
	}
	return runtime.RowMap(k, v, codegen.RowMapRows, int(m.Dh))
}

// Forward enqueues the step: every kernel but the load stage's, which Fold
// runs, as the generated Layer's Forward does. It fails on a kernel not
// generated.
func (l *Loaded) Forward(in *Instance, s *runtime.Stream) error { return l.launchAll(in, s, false) }

// Fold enqueues the load stage's kernels (plan.Kernel.Load), which compute
// the folded values of params that every step reads, as the generated
// Layer does once after loading its weights.
func (l *Loaded) Fold(in *Instance, s *runtime.Stream) error { return l.launchAll(in, s, true) }

// Run enqueues a step from the leaves: Fold, then Forward.
func (l *Loaded) Run(in *Instance, s *runtime.Stream) error {
	if err := l.Fold(in, s); err != nil {
		return err
	}
	return l.Forward(in, s)
}

// launchAll enqueues, in order, the kernels of the load stage or of the
// step.
func (l *Loaded) launchAll(in *Instance, s *runtime.Stream, load bool) error {
	for i, k := range l.P.Kernels {
		if k.Plan.Load != load {
			continue
		}
		if err := l.Launch(in, i, s); err != nil {
			return err
		}
	}
	return nil
}

// Reset uploads the leaves (states as before the step) and poisons the
// rest, the load stage's values included.
func (in *Instance) Reset(r *Reference) error {
	for _, b := range in.L.Layout.Own {
		var data []byte
		var err error
		switch b.Role {
		case "output", "folded":
			continue
		case "state":
			data, err = r.StateBytes(b.Value, false)
		default:
			data, err = r.LeafBytes(b.Value)
		}
		if err != nil {
			return err
		}
		if err := in.Upload(b.Value, data); err != nil {
			return err
		}
	}
	return in.PoisonAll()
}
