//go:build cuda

package gpu

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/codegen/golang"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/runtime"
)

// The CUDA-graph ladder on the device (gpu.test -test.run Ladder): the
// runtime.Ladder that the generated packages' Ladder and Step hand their
// buffers to, here over the suite's own buffers (Instance) and launches
// (the generated Forward's, with the batch dim set to the bucket), its step
// inputs described by golang.LadderInputs as the generated code has them.

// forwardAt enqueues every kernel of l with the dims of the plan but for
// those in at, as the generated forward does with the dims it is given.
func (l *Loaded) forwardAt(in *Instance, s *runtime.Stream, at map[string]int64) error {
	for i, k := range l.P.Kernels {
		if l.entries[i] == nil {
			return fmt.Errorf("kernel %s was not generated: %w", k.Plan.Name, k.Err)
		}
		args, err := in.args(k)
		if err != nil {
			return err
		}
		for j, prm := range k.CUDA.Params {
			if n, ok := at[prm.Dim]; ok && prm.Value == nil {
				args[j] = n
			}
		}
		lp := k.Plan.Launch
		for _, e := range l.entries[i] {
			if err := runtime.LaunchWith(e, lp.Grid, k.CUDA.Block, lp.SharedBytes, launchOpts(lp, false), s, args...); err != nil {
				return fmt.Errorf("%s: %w", k.Plan.Name, err)
			}
		}
	}
	return nil
}

// ladderRig is a loaded plan, its buffers and a ladder over them.
type ladderRig struct {
	dev    *Device
	l      *Loaded
	in     *Instance
	ladder *runtime.Ladder
	inputs []runtime.StepInput
	pages  *runtime.PageTable
	bufs   []runtime.Buffer
	// inputOf are the graph's inputs, following inputs.
	inputOf []*ir.Value
}

// newLadderRig loads p, allocates its buffers and captures a ladder of
// buckets over them; pages, when not nil, replaces the page table
// golang.LadderInputs describes (a reserved scratch page).
func newLadderRig(t *testing.T, dev *Device, p *Plan, buckets []int, pages func(*runtime.PageTable)) *ladderRig {
	t.Helper()
	l, err := dev.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	in, err := l.Alloc()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Free() })
	r := &ladderRig{dev: dev, l: l, in: in}
	g := p.Plan.Graph
	if r.inputs, r.pages, err = golang.LadderInputs(g, p.Dims); err != nil {
		t.Fatal(err)
	}
	if pages != nil {
		pages(r.pages)
	}
	for _, si := range r.inputs {
		v := valueNamed(g.Inputs, si.Name)
		b, _ := l.Layout.Buf(v)
		r.inputOf = append(r.inputOf, v)
		r.bufs = append(r.bufs, in.Own[b.Index])
	}
	s := dev.Stream
	before := s.Counts()
	r.ladder, err = runtime.NewLadder(s, runtime.LadderSpec{Buckets: buckets, Inputs: r.inputs, Buffers: r.bufs, Pages: r.pages}, func(bucket int) error {
		return l.forwardAt(in, s, map[string]int64{"B": int64(bucket)})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.ladder.Destroy() })
	c := s.Counts().Sub(before)
	t.Logf("ladder %v captured: %d kernel launches recorded, %d run", buckets, c.Captured, c.Launches())
	if c.Launches() != 0 {
		t.Errorf("capturing the ladder ran %d launches", c.Launches())
	}
	return r
}

func valueNamed(vs []*ir.Value, name string) *ir.Value {
	for _, v := range vs {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// reset uploads the params and states (host bytes by name), poisons the
// outputs and the arena and waits.
func (r *ladderRig) reset(leaves map[string][]byte) error {
	for i, b := range r.l.Layout.Own {
		if b.Role != "param" && b.Role != "state" {
			continue
		}
		data := leaves[b.Value.Name]
		if err := r.in.Own[i].Memset(0, b.Bytes, 0); err != nil {
			return err
		}
		if err := r.in.Own[i].CopyInAt(0, data[:min(len(data), int(b.Bytes))]); err != nil {
			return err
		}
	}
	if err := r.in.PoisonAll(); err != nil {
		return err
	}
	return r.dev.Ctx.Synchronize()
}

// eager uploads the step's inputs as staged for bucket (padded) and runs
// the layer eagerly at B = bucket; with stage false it uploads them as
// given and runs at B = batch.
func (r *ladderRig) eager(batch, bucket int, host [][]byte, stage bool) error {
	b := batch
	if stage {
		copies, err := runtime.Stage(r.inputs, r.pages, batch, bucket, host)
		if err != nil {
			return err
		}
		for _, c := range copies {
			buf := r.bufs[c.Input]
			if err := buf.CopyInAt(0, c.Data); err != nil {
				return err
			}
			if err := buf.Memset(int64(len(c.Data)), c.Zero, 0); err != nil {
				return err
			}
		}
		b = bucket
	} else {
		for i, h := range host {
			if err := r.bufs[i].CopyInAt(0, h); err != nil {
				return err
			}
		}
	}
	if err := r.dev.Ctx.Synchronize(); err != nil {
		return err
	}
	if err := r.l.forwardAt(r.in, r.dev.Stream, map[string]int64{"B": int64(b)}); err != nil {
		return err
	}
	return r.dev.Stream.Synchronize()
}

// step runs one ladder step and checks it was exactly one launch.
func (r *ladderRig) step(t *testing.T, batch int, host [][]byte) (int, error) {
	s := r.dev.Stream
	before := s.Counts()
	bucket, err := r.ladder.Step(batch, host...)
	if err != nil {
		return 0, err
	}
	c := s.Counts().Sub(before)
	if c.Launches() != 1 || c.Graphs != 1 || c.Kernels != 0 {
		t.Errorf("step of %d sequences: %d launches (%d graphs, %d kernels), want exactly one graph launch", batch, c.Launches(), c.Graphs, c.Kernels)
	} else {
		t.Logf("step of %d sequences (bucket %d): 1 launch (one graph), %d copies (not launches)", batch, bucket, c.Copies)
	}
	return bucket, s.Synchronize()
}

// snapshot downloads the outputs, the states and the arena.
func (r *ladderRig) snapshot() (map[string][]byte, error) {
	out := map[string][]byte{}
	for i, b := range r.l.Layout.Own {
		if b.Role == "output" || b.Role == "state" {
			data := make([]byte, b.Bytes)
			if err := r.in.Own[i].CopyOutAt(0, data); err != nil {
				return nil, err
			}
			out[b.Role+" "+b.Value.Name] = data
		}
	}
	arena := make([]byte, r.in.Arena.Bytes)
	if err := r.in.Arena.CopyOutAt(0, arena); err != nil {
		return nil, err
	}
	out["arena"] = arena
	return out, nil
}

// sameBits compares two snapshots bit for bit and returns the bytes
// compared; within, when set, limits a name's comparison to its first
// bytes or masks bytes out (it returns the bytes to compare).
func sameBits(t *testing.T, what string, want, got map[string][]byte, within func(name string, b []byte) []byte) int {
	t.Helper()
	n := 0
	for _, name := range slices.Sorted(maps.Keys(want)) {
		w, g := want[name], got[name]
		if within != nil {
			w, g = within(name, w), within(name, g)
		}
		if w == nil {
			continue
		}
		n += len(w)
		if at := Bitwise(w, g); at >= 0 {
			t.Errorf("%s: %s differs at byte %d of %d", what, name, at, len(w))
		}
	}
	return n
}

// TestLadderLlama is the done-when: the decode step of Llama-3-8B
// at full size (B=1, S=1, T=4096; random bf16 params, seeded) as a graph
// step of the ladder is one launch, and its output, KV cache and arena
// equal the eager step's bit for bit.
func TestLadderLlama(t *testing.T) {
	dev, _ := testDevice(t)
	llama, _, err := LadderPlans()
	if err != nil {
		t.Fatal(err)
	}
	if !llama.Generated() {
		t.Fatalf("not generated: %s", llama.NotGenerated())
	}
	g := llama.Plan.Graph
	rnd, err := interp.RandomInputs(g, llama.Dims, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	leaves := map[string][]byte{}
	for name, tv := range rnd {
		v := valueNamed(append(append(slices.Clone(g.Inputs), g.Params...), g.States...), name)
		if v != nil {
			leaves[name] = Encode(tv.Data, v.Type.DType)
		}
	}
	r := newLadderRig(t, dev, llama, []int{1}, nil)
	host := make([][]byte, len(r.inputs))
	for i, v := range r.inputOf {
		host[i] = leaves[v.Name]
	}
	if err := r.reset(leaves); err != nil {
		t.Fatal(err)
	}
	before := dev.Stream.Counts()
	if err := r.eager(1, 1, host, false); err != nil {
		t.Fatal(err)
	}
	eagerLaunches := dev.Stream.Counts().Sub(before).Launches()
	eager, err := r.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.reset(leaves); err != nil {
		t.Fatal(err)
	}
	if _, err := r.step(t, 1, host); err != nil {
		t.Fatal(err)
	}
	graph, err := r.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	n := sameBits(t, "graph step against eager", eager, graph, nil)
	if !t.Failed() {
		t.Logf("llama3_8b B=1,S=1,T=4096: graph step (1 launch) equals the eager step (%d launches) bit for bit: %d bytes of output, KV cache and arena", eagerLaunches, n)
	}
	if Unwritten(graph["output y"]) || Unwritten(eager["output y"]) {
		t.Error("the output was never written")
	}
	// Bad steps are errors and enqueue nothing.
	before = dev.Stream.Counts()
	for _, tc := range []struct {
		batch int
		host  [][]byte
		want  string
	}{
		{0, host, "step of 0"},
		{2, host, "largest bucket"},
		{1, host[:1], "inputs"},
		{1, [][]byte{host[0][:10], host[1]}, "bytes, want"},
	} {
		if _, err := r.ladder.Step(tc.batch, tc.host...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Step(%d) with %d inputs: got %v, want an error with %q", tc.batch, len(tc.host), err, tc.want)
		}
	}
	if c := dev.Stream.Counts().Sub(before); c != (runtime.Counts{}) {
		t.Errorf("failed steps enqueued %+v", c)
	}
}

// pagedStep is a step of the paged test: batch sequences of the given
// lengths (after the append), distinct random pages each.
func pagedStep(rng *rand.Rand, r *ladderRig, lens []int) [][]byte {
	pt := r.pages
	perm := rng.Perm(int(pt.Pages))
	var indptr, ids, last []int32
	indptr = append(indptr, 0)
	for _, n := range lens {
		np := (n + int(pt.Page) - 1) / int(pt.Page)
		for range np {
			ids = append(ids, int32(perm[0]))
			perm = perm[1:]
		}
		indptr = append(indptr, int32(len(ids)))
		last = append(last, int32(n-(np-1)*int(pt.Page)))
	}
	host := make([][]byte, len(r.inputs))
	for i, si := range r.inputs {
		v := r.inputOf[i]
		switch si.Kind {
		case runtime.PageIndptr:
			host[i] = i32bytes(indptr)
		case runtime.PageIDs:
			host[i] = i32bytes(ids)
		case runtime.PageLast:
			host[i] = i32bytes(last)
		default:
			if v.Type.DType == ir.I32 { // positions: the new token's
				var pos []int32
				for _, n := range lens {
					for s := range pt.NewTokens {
						pos = append(pos, int32(int64(n)-pt.NewTokens+s))
					}
				}
				host[i] = i32bytes(pos)
				continue
			}
			host[i] = randomBytes(rng, int(si.RowBytes)*len(lens), v.Type.DType, 1)
		}
	}
	return host
}

func i32bytes(v []int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}

// randomBytes is n bytes of values uniform in (-scale, scale) of dt.
func randomBytes(rng *rand.Rand, n int, dt ir.DType, scale float64) []byte {
	vals := make([]float64, n/int(dt.Size()))
	for i := range vals {
		vals[i] = (2*rng.Float64() - 1) * scale
	}
	return Encode(vals, dt)
}

// TestLadderPaged pads batches of 1, 3 and 5 sequences of the shrunk
// paged_decode to buckets 1, 4 and 8, at two context lengths (up to 35 and
// up to 65 tokens) through the same graphs. Each graph step is one launch
// and equals, bit for bit, the eager step on the same padded inputs
// (outputs, page pool, arena) and, on the real sequences, the eager step
// of the unpadded batch: its output rows and the whole pool but the scratch
// page, so a padded sequence wrote nowhere else.
func TestLadderPaged(t *testing.T) {
	dev, _ := testDevice(t)
	_, paged, err := LadderPlans()
	if err != nil {
		t.Fatal(err)
	}
	if !paged.Generated() {
		t.Fatalf("not generated: %s", paged.NotGenerated())
	}
	// The pool's last page (P-1) is the scratch page: the sequences' ids
	// are 0..P-2.
	r := newLadderRig(t, dev, paged, LadderPagedBuckets, func(pt *runtime.PageTable) {
		pt.Pages--
		pt.Scratch = int32(pt.Pages)
	})
	if got := r.ladder.Buckets(); !slices.Equal(got, LadderPagedBuckets) {
		t.Fatalf("buckets %v", got)
	}
	rng := rand.New(rand.NewPCG(DefaultSeed, 7))
	g := paged.Plan.Graph
	leaves := map[string][]byte{}
	for _, b := range r.l.Layout.Own {
		if b.Role == "param" || b.Role == "state" {
			leaves[b.Value.Name] = randomBytes(rng, int(b.Bytes), b.Value.Type.DType, 0.5)
		}
	}
	pool := valueNamed(g.States, "kv")
	pageBytes := r.l.Layout.Own[mustBuf(t, r.l, pool).Index].Bytes / paged.Dims["P"]
	scratchFrom := int64(r.pages.Scratch) * pageBytes
	y := g.Outputs[0]
	for _, ctx := range []struct {
		name     string
		min, max int
	}{{"short context", 2, 35}, {"long context", 36, 65}} {
		for _, batch := range []int{1, 3, 5} {
			name := fmt.Sprintf("%s/batch=%d", ctx.name, batch)
			lens := make([]int, batch)
			for i := range lens {
				lens[i] = ctx.min + rng.IntN(ctx.max-ctx.min+1)
			}
			host := pagedStep(rng, r, lens)
			// The graph step.
			if err := r.reset(leaves); err != nil {
				t.Fatal(err)
			}
			bucket, err := r.step(t, batch, host)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			graph, err := r.snapshot()
			if err != nil {
				t.Fatal(err)
			}
			// Eager on the same padded inputs, at the bucket.
			if err := r.reset(leaves); err != nil {
				t.Fatal(err)
			}
			if err := r.eager(batch, bucket, host, true); err != nil {
				t.Fatalf("%s: eager: %v", name, err)
			}
			padded, err := r.snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if out := "output " + y.Name; Unwritten(graph[out]) || Unwritten(padded[out]) {
				t.Errorf("%s: %s never written", name, out)
			}
			n := sameBits(t, name+": graph step against eager at the bucket", padded, graph, nil)
			// Eager on the unpadded batch: the real rows and the pool but
			// the scratch page.
			if err := r.reset(leaves); err != nil {
				t.Fatal(err)
			}
			if err := r.eager(batch, batch, host, false); err != nil {
				t.Fatalf("%s: eager unpadded: %v", name, err)
			}
			plain, err := r.snapshot()
			if err != nil {
				t.Fatal(err)
			}
			rowBytes := int(r.inputs[0].RowBytes) * int(y.Type.DType.Size()) / int(r.inputOf[0].Type.DType.Size())
			m := sameBits(t, name+": graph step against the unpadded eager step", plain, graph, func(key string, b []byte) []byte {
				switch key {
				case "output " + y.Name:
					return b[:batch*rowBytes]
				case "state " + pool.Name:
					return b[:scratchFrom]
				}
				return nil
			})
			if !t.Failed() {
				t.Logf("%s (lengths %v): bucket %d; equals eager at the bucket bit for bit (%d bytes) and the unpadded eager step on the real rows and pages (%d bytes)", name, lens, bucket, n, m)
			}
		}
	}
}

func mustBuf(t *testing.T, l *Loaded, v *ir.Value) *Buf {
	t.Helper()
	b, ok := l.Layout.Buf(v)
	if !ok {
		t.Fatalf("%s has no buffer", v.Ref())
	}
	return b
}
