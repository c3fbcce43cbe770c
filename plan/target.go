package plan

import (
	"fmt"
	"sort"
	"strings"
)

// Target describes the GPU a plan is sized and its code generated for: one
// description handed to the passes, the cost model, codegen and the bench.
type Target struct {
	// Name names the device ("h200").
	Name string
	// Arch is the architecture NVRTC compiles for ("sm_90a").
	Arch string
	// SMs is the streaming multiprocessor count.
	SMs int64
	// SharedPerSM is an SM's shared memory in bytes; SharedPerBlock the
	// most one block may take (dynamic and static together).
	SharedPerSM, SharedPerBlock int64
	// RegistersPerSM is the 32-bit registers of an SM.
	RegistersPerSM int64
	// L2Bytes is the L2 cache size.
	L2Bytes int64
	// TMA reports the tensor memory accelerator (bulk copies described by
	// tensor maps), WGMMA the warpgroup matrix multiply: both sm_90a.
	TMA, WGMMA bool
	// DependentLaunch reports programmatic dependent launch (sm_90): a
	// kernel launched with it may start while the one before it in the
	// stream finishes, and waits (griddepcontrol.wait) before it touches
	// memory, so that the gap between kernels closes.
	DependentLaunch bool
	// ClusterSlots[c] is how many thread-block clusters of c blocks run
	// at once when each block takes a whole SM (the driver's
	// cudaOccupancyMaxActiveClusters), where measured; 0 elsewhere. A
	// cluster's blocks share a GPC, whose SM count is not a multiple of
	// every c, so the count can be below SMs / c (ResidentClusters).
	ClusterSlots [9]int64
}

// The described targets. H200 is the default.
var (
	// H200 is the NVIDIA H200 (sm_90a, 141 GB HBM3e).
	H200 = Target{Name: "h200", Arch: "sm_90a", SMs: 132, SharedPerSM: 228 << 10, SharedPerBlock: 227 << 10, RegistersPerSM: 64 << 10, L2Bytes: 60 << 20, TMA: true, WGMMA: true, DependentLaunch: true, ClusterSlots: hopperClusterSlots}
	// H100 is the NVIDIA H100 SXM (sm_90a, 80 GB HBM3).
	H100 = Target{Name: "h100", Arch: "sm_90a", SMs: 132, SharedPerSM: 228 << 10, SharedPerBlock: 227 << 10, RegistersPerSM: 64 << 10, L2Bytes: 50 << 20, TMA: true, WGMMA: true, DependentLaunch: true, ClusterSlots: hopperClusterSlots}
	// A100 is the NVIDIA A100 (sm_80): no TMA, no wgmma.
	A100 = Target{Name: "a100", Arch: "sm_80", SMs: 108, SharedPerSM: 164 << 10, SharedPerBlock: 163 << 10, RegistersPerSM: 64 << 10, L2Bytes: 40 << 20}
)

var targets = map[string]Target{H200.Name: H200, H100.Name: H100, A100.Name: A100}

// LookupTarget returns the described target named name (a device, "h200",
// or an architecture, "sm_90a" giving the H200 and "sm_80" the A100).
func LookupTarget(name string) (Target, error) {
	name = strings.ToLower(name)
	if t, ok := targets[name]; ok {
		return t, nil
	}
	switch name {
	case H200.Arch:
		return H200, nil
	case A100.Arch:
		return A100, nil
	}
	names := make([]string, 0, len(targets))
	for n := range targets {
		names = append(names, n)
	}
	sort.Strings(names)
	return Target{}, fmt.Errorf("unknown target %q: want one of %s, %s or %s", name, strings.Join(names, ", "), H200.Arch, A100.Arch)
}

// Verify reports a target that cannot size a plan.
func (t Target) Verify() error {
	if t.SMs <= 0 || t.SharedPerBlock <= 0 || t.SharedPerSM < t.SharedPerBlock {
		return fmt.Errorf("target %s: %d SMs, %d bytes of shared memory per SM and %d per block", t.Name, t.SMs, t.SharedPerSM, t.SharedPerBlock)
	}
	return nil
}

// hopperClusterSlots are the resident clusters of the 132-SM H100 and H200
// for a block an SM, by cluster size.
var hopperClusterSlots = [9]int64{1: 132, 2: 66}

// ResidentClusters is how many clusters of size blocks, each block taking
// a whole SM, run at once: ClusterSlots where described, SMs for single
// blocks, 0 where not known (a launch then takes no such clusters).
func (t Target) ResidentClusters(size int64) int64 {
	switch {
	case size <= 1:
		return t.SMs
	case size < int64(len(t.ClusterSlots)):
		return t.ClusterSlots[size]
	}
	return 0
}
