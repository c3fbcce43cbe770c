//go:build cuda

package gpu

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/fuser-dev/fuser/runtime"
)

// Timeline replays p's step as a CUDA graph of its timeline modules
// (Plan.Timeline: the same kernels with probes) Opt.Warmup times, then
// Opt.Reps times reading every step kernel's probes after each replay; the
// load stage runs once before. leaves holds the inputs. Every kernel must
// be generated.
func (b *Bench) Timeline(p *Plan, leaves *Reference) (*Timeline, error) {
	if !p.Generated() {
		return nil, fmt.Errorf("timeline: not every kernel is generated: %s", notGeneratedNames(p))
	}
	l, err := b.D.Load(p.Timeline())
	if err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	// The step's kernels carry probes; the load stage runs once before
	// the capture, as the generated Layer folds at load.
	var probes []runtime.Buffer
	var names []string
	for i, m := range l.modules {
		k := p.Kernels[i].Plan
		if k.Load {
			continue
		}
		pr, err := m.Global("fz_timeline")
		if err != nil {
			return nil, fmt.Errorf("timeline %s: %w", k.Name, err)
		}
		if pr.Bytes != int64(len(timelineReset)) {
			return nil, fmt.Errorf("timeline %s: fz_timeline is %d bytes, want %d", k.Name, pr.Bytes, len(timelineReset))
		}
		probes, names = append(probes, pr), append(names, k.Name)
	}
	in, err := l.Prepare(leaves)
	if err != nil {
		return nil, err
	}
	defer in.Free()
	if err := l.Fold(in, b.D.Stream); err != nil {
		return nil, fmt.Errorf("timeline: load stage: %w", err)
	}
	g, err := runtime.Capture(b.D.Stream, func() error { return l.Forward(in, b.D.Stream) })
	if err != nil {
		return nil, fmt.Errorf("timeline: capture: %w", err)
	}
	defer g.Destroy()
	for range b.Opt.Warmup {
		if err := g.Launch(b.D.Stream); err != nil {
			return nil, err
		}
	}
	var reps []*Timeline
	raw := make([]byte, len(timelineReset))
	for range max(b.Opt.Reps, 1) {
		if err := b.D.Stream.Synchronize(); err != nil {
			return nil, err
		}
		for _, pr := range probes {
			if err := pr.CopyIn(timelineReset); err != nil {
				return nil, err
			}
		}
		if err := g.Launch(b.D.Stream); err != nil {
			return nil, err
		}
		if err := b.D.Stream.Synchronize(); err != nil {
			return nil, err
		}
		times := make([][4]uint64, len(probes))
		for i, pr := range probes {
			if err := pr.CopyOut(raw); err != nil {
				return nil, err
			}
			for j := range times[i] {
				times[i][j] = binary.LittleEndian.Uint64(raw[8*j:])
			}
		}
		t, err := spans(names, times)
		if err != nil {
			return nil, err
		}
		reps = append(reps, t)
	}
	slices.SortFunc(reps, func(a, b *Timeline) int { return cmp.Compare(a.SpanUs, b.SpanUs) })
	return reps[len(reps)/2], nil
}
