// Package codegen holds what the CUDA and Go code generators agree on: the
// kernel ABI. Every generated kernel takes, in order, one device pointer per
// plan input value, one per plan output value, then one int64 per graph dim
// (in Graph.Dims order), then the tensor maps its body copies through (a
// 128-byte CUtensorMap each, passed by value, which the launcher encodes
// from the buffers' addresses: RowMap). KV-cache values (outputs of an
// append) are passed as the pointer of their state; the new tokens are
// written through it.
package codegen

import (
	"strconv"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// Param is one kernel parameter.
type Param struct {
	// Name is a C identifier, unique within the kernel.
	Name string
	// Value is the tensor a pointer parameter addresses; nil for a dim.
	Value *ir.Value
	// Dim is the graph dim an int64 parameter carries.
	Dim string
	// Map describes the tensor map a map parameter carries.
	Map *RowMap
	// Written is set for output pointers.
	Written bool
}

// Params returns the parameters of kernel k in ABI order.
func Params(g *ir.Graph, k *plan.Kernel) []Param {
	var ps []Param
	seen := map[*ir.Value]bool{}
	add := func(v *ir.Value, written bool) {
		buf := Buffer(v)
		if seen[buf] {
			return
		}
		seen[buf] = true
		ps = append(ps, Param{Name: ParamName(buf), Value: buf, Written: written})
	}
	for _, v := range k.Inputs {
		add(v, false)
	}
	for _, v := range k.Outputs {
		add(v, true)
	}
	for _, d := range g.Dims {
		ps = append(ps, Param{Name: "dim_" + d, Dim: d})
	}
	return ps
}

// RowMap is the tensor map of the decode attention's keys and values
// (codegen/cuda/device/attention_bulk.cuh): memory from the lower of K's
// and V's buffers viewed as RowMapRows rows of Dh 16-bit elements, each row
// Dh/64 lines of 128 bytes (dims {64, rows, Dh/64}, strides {2 Dh, 128}
// bytes), copied in boxes of {64, 16, Dh/64} elements into the 128-byte
// swizzle. The launcher encodes it with cuTensorMapEncodeTiled
// (runtime.RowMap).
type RowMap struct {
	// K and V are the buffers of the keys and values (the same state for
	// an appended cache).
	K, V *ir.Value
	// Dh is the head dim, a multiple of 64.
	Dh int64
}

// RowMapRows is the rows a RowMap addresses from its base: the kernel
// checks each copy's rows against it (FZ_ATT_TROWS), so that the map
// covers both buffers whatever their distance.
const RowMapRows = 0x7fffffff

// Buffer is the value whose memory a kernel parameter points at: the state
// behind a KV cache (or behind a view of one), the whole buffer behind a
// split part, or v itself.
func Buffer(v *ir.Value) *ir.Value {
	r := plan.Root(v)
	if plan.InCache(r) {
		return r.Def.Args[0]
	}
	return r
}

// ParamName is the C name of a value's pointer: its spec name when it has
// one, with the value ID to keep it unique.
func ParamName(v *ir.Value) string {
	if v.Name != "" {
		return "v" + strconv.Itoa(v.ID) + "_" + v.Name
	}
	return "v" + strconv.Itoa(v.ID)
}
