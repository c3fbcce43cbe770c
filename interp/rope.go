package interp

import (
	"fmt"
	"math"
)

// rope rotates x [B, S, H, Dh] at positions pos [B, S] in the rotate-half
// (GPT-NeoX / Llama) form: for i < Dh/2, with a = pos * theta^(-2i/Dh),
// out[i] = x[i] cos a - x[i+Dh/2] sin a and
// out[i+Dh/2] = x[i+Dh/2] cos a + x[i] sin a.
func rope(x, pos *Tensor, theta float64) (*Tensor, error) {
	if len(x.Shape) != 4 {
		return nil, fmt.Errorf("rope needs x of rank 4, got %v", x.Shape)
	}
	b, s, h, dh := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if !equalInts(pos.Shape, []int{b, s}) {
		return nil, fmt.Errorf("rope positions have shape %v, want [%d %d]", pos.Shape, b, s)
	}
	if dh%2 != 0 {
		return nil, fmt.Errorf("rope needs an even head dim, got %d", dh)
	}
	half := dh / 2
	inv := make([]float64, half)
	for i := range inv {
		inv[i] = math.Pow(theta, -2*float64(i)/float64(dh))
	}
	cos, sin := make([]float64, half), make([]float64, half)
	out := New(x.Shape...)
	for bs := range b * s {
		p := pos.Data[bs]
		for i := range half {
			sin[i], cos[i] = math.Sincos(p * inv[i])
		}
		for hh := range h {
			off := (bs*h + hh) * dh
			src, dst := x.Data[off:off+dh], out.Data[off:off+dh]
			for i := range half {
				x1, x2 := src[i], src[i+half]
				dst[i] = x1*cos[i] - x2*sin[i]
				dst[i+half] = x2*cos[i] + x1*sin[i]
			}
		}
	}
	return out, nil
}
