package gpu

import (
	"fmt"

	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/plan"
)

// DeterministicSplitKeys is the split size the determinism test uses.
const DeterministicSplitKeys = 512

// DeterminismBatch is the batch sequence 0 runs in, against alone.
const DeterminismBatch = 4

// DeterminismCase is a layer and context of the determinism test.
type DeterminismCase struct {
	Variant string // a DecLayer
	T       int64
	L       int64 // a cascade's shared prefix
}

// Dims are the case's dims at batch b.
func (c DeterminismCase) Dims(b int64) map[string]int64 {
	d := map[string]int64{"B": b, "S": 1, "T": c.T}
	if c.L > 0 {
		d["L"] = c.L
	}
	return d
}

// DeterminismCases are the determinism test's layers: contiguous caches of
// many splits and of one, a paged cache of mixed lengths, a cascade whose
// shared prefix takes several splits.
var DeterminismCases = []DeterminismCase{{"c128", 5000, 0}, {"c128", 70, 0}, {"paged16", 3000, 0}, {"cascade128", 3000, 4097}}

// DeterminismPlans plans case c at batch DeterminismBatch and for its
// sequence 0 alone (decode split fixed at splitKeys when positive), with
// random inputs for the batch and those of sequence 0 cut out of them.
func DeterminismPlans(c DeterminismCase, splitKeys int64) (big, one *Plan, bigIn, oneIn map[string]*interp.Tensor, err error) {
	g, err := DecLayer(c.Variant)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if big, err = NewPlanSplit(g, c.Dims(DeterminismBatch), true, splitKeys, plan.H200); err != nil {
		return nil, nil, nil, nil, err
	}
	if bigIn, err = interp.RandomInputs(g, big.Dims, 77); err != nil {
		return nil, nil, nil, nil, err
	}
	one, oneIn, err = firstSequence(big, bigIn, splitKeys)
	return big, one, bigIn, oneIn, err
}

// firstSequence plans the layer for sequence 0 alone and cuts its inputs
// out of the batch's: the leading (batch) axis of q, k and v, axis 1 of a
// contiguous cache [2, B, ...]; a paged cache keeps its pool, with the
// page table of sequence 0; a cascade's prefix is shared as it is.
func firstSequence(big *Plan, in map[string]*interp.Tensor, sk int64) (*Plan, map[string]*interp.Tensor, error) {
	nb := int(big.Dims["B"])
	out := map[string]*interp.Tensor{}
	dims := map[string]int64{"B": 1, "S": big.Dims["S"], "T": big.Dims["T"]}
	for name, t := range in {
		switch name {
		case "prefix":
			out[name] = t
			dims["L"] = big.Dims["L"]
		case "q", "k", "v", "kv_last":
			n := len(t.Data) / nb
			sh := append([]int{1}, t.Shape[1:]...)
			out[name] = &interp.Tensor{Shape: sh, Data: append([]float64(nil), t.Data[:n]...)}
		case "kv":
			if _, paged := in["kv_pages"]; paged {
				out[name] = t
				dims["P"] = int64(t.Shape[0])
				continue
			}
			half := len(t.Data) / 2
			n := half / nb
			sh := append([]int{2, 1}, t.Shape[2:]...)
			d := append(append([]float64(nil), t.Data[:n]...), t.Data[half:half+n]...)
			out[name] = &interp.Tensor{Shape: sh, Data: d}
		case "kv_indptr":
			lo, hi := t.Data[0], t.Data[1]
			out[name] = &interp.Tensor{Shape: []int{2}, Data: []float64{0, hi - lo}}
		case "kv_pages":
			lo, hi := int(in["kv_indptr"].Data[0]), int(in["kv_indptr"].Data[1])
			out[name] = &interp.Tensor{Shape: []int{hi - lo}, Data: append([]float64(nil), t.Data[lo:hi]...)}
			dims["N"] = int64(hi - lo)
		default:
			return nil, nil, fmt.Errorf("input %s: no rule to cut sequence 0 out", name)
		}
	}
	one, err := NewPlanSplit(big.Graph, dims, true, sk, big.Target)
	return one, out, err
}
