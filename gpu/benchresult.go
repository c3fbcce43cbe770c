package gpu

import "math"

// Ceilings are the rates measured in the same run that achieved rates are
// compared with.
type Ceilings struct {
	// CopyTBps is a device-to-device copy (cuMemcpyDtoDAsync of 1 GiB),
	// bytes read plus bytes written over the time.
	CopyTBps float64 `json:"copy_TBps"`
	// GemmTFLOPs is the FLOP ceiling the fractions use: the larger of the
	// two measurements below, named by GemmSource.
	GemmTFLOPs float64 `json:"gemm_TFLOPs"`
	GemmSource string  `json:"gemm_source"`
	// MMASyncTFLOPs is the register-only mma.sync loop (MMAPeakSource): the
	// tensor-core issue rate our mma.sync kernels can reach, without cuBLAS.
	MMASyncTFLOPs float64 `json:"mma_sync_TFLOPs"`
	// GeneratedGemmTFLOPs is our own generated GEMM kernel (codegen/cuda)
	// on an 8192×8192×8192 bf16 matmul; GeneratedGemmNote says why it is
	// missing when it is.
	GeneratedGemmTFLOPs float64 `json:"generated_gemm_TFLOPs,omitempty"`
	GeneratedGemmNote   string  `json:"generated_gemm_note,omitempty"`
}

// KernelTime is one kernel's measurement.
type KernelTime struct {
	Name     string   `json:"name"`
	Strategy string   `json:"strategy"`
	Variant  string   `json:"variant"`
	Launches int      `json:"launches"`
	Grid     [3]int64 `json:"grid"`
	Block    int      `json:"block"`
	// Bytes and Flops are the cost model's (plan.Costs).
	Bytes int64 `json:"model_bytes"`
	Flops int64 `json:"model_flops"`
	// MedianUs and MinUs are over Reps launches, each on the next copy of
	// its buffers (Rotation copies, together over 3× the L2).
	MedianUs float64 `json:"median_us,omitempty"`
	MinUs    float64 `json:"min_us,omitempty"`
	Rotation int     `json:"rotation,omitempty"`
	TBps     float64 `json:"TBps,omitempty"`
	TFLOPs   float64 `json:"TFLOPs,omitempty"`
	// BWFrac and FlopFrac are TBps and TFLOPs over the ceilings; FloorUs is
	// the roofline time max(bytes/copy, flops/gemm) and OfFloor FloorUs
	// over MedianUs (1 = at the roofline).
	BWFrac   float64 `json:"bw_frac,omitempty"`
	FlopFrac float64 `json:"flop_frac,omitempty"`
	FloorUs  float64 `json:"floor_us"`
	OfFloor  float64 `json:"of_floor,omitempty"`
	// Skipped is why the kernel was not timed (codegen/cuda's error).
	Skipped string `json:"skipped,omitempty"`
	// Load marks a kernel of the load stage: timed alone, but run once at
	// load, not in the step, and not in the step's sum and launches.
	Load bool `json:"load,omitempty"`
}

// StepTime is the whole step.
type StepTime struct {
	Launches int `json:"launches"`
	// EagerUs is the median of the step launched kernel by kernel, GraphUs
	// of its CUDA graph replayed; each step between two events, rotating
	// over Rotation instances of the layer (together over 3× the L2).
	EagerUs  float64 `json:"eager_us,omitempty"`
	GraphUs  float64 `json:"graph_us,omitempty"`
	Rotation int     `json:"rotation,omitempty"`
	// KernelsSumUs sums the step kernels' medians (those timed; the load
	// stage's left out).
	KernelsSumUs float64 `json:"kernels_sum_us"`
	// FloorUs is the whole plan's roofline time.
	FloorUs float64 `json:"floor_us"`
	Skipped string  `json:"skipped,omitempty"`
}

// PlanBench is one plan's measurements.
type PlanBench struct {
	Plan    string       `json:"plan"`
	Kernels []KernelTime `json:"kernels"`
	Step    StepTime     `json:"step"`
	// Model is the plan's modelled totals.
	ModelBytes int64 `json:"model_bytes"`
	ModelFlops int64 `json:"model_flops"`
}

// add appends a kernel's measurement; a step kernel's median and launches
// count toward the step's, a load-stage kernel's do not.
func (pb *PlanBench) add(kt KernelTime) {
	pb.Kernels = append(pb.Kernels, kt)
	if !kt.Load {
		pb.Step.KernelsSumUs += kt.MedianUs
		pb.Step.Launches += kt.Launches
	}
}

// round3 rounds to 3 significant digits, for JSON.
func round3(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

// Round rounds the measurements for printing.
func (pb *PlanBench) Round() {
	for i := range pb.Kernels {
		k := &pb.Kernels[i]
		for _, f := range []*float64{&k.MedianUs, &k.MinUs, &k.TBps, &k.TFLOPs, &k.BWFrac, &k.FlopFrac, &k.FloorUs, &k.OfFloor} {
			*f = round3(*f)
		}
	}
	for _, f := range []*float64{&pb.Step.EagerUs, &pb.Step.GraphUs, &pb.Step.KernelsSumUs, &pb.Step.FloorUs} {
		*f = round3(*f)
	}
}

// RoundCeilings rounds the ceilings for printing.
func (c *Ceilings) Round() {
	for _, f := range []*float64{&c.CopyTBps, &c.GemmTFLOPs, &c.MMASyncTFLOPs, &c.GeneratedGemmTFLOPs} {
		*f = round3(*f)
	}
}
