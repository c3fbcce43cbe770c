package interp

import (
	"math"
	"testing"
)

// TestShapeOps checks reshape, transpose, split, slice, concat with
// broadcasting, casts and a matmul whose operands broadcast batch axes.
func TestShapeOps(t *testing.T) {
	g := build(t, `
layer shp
dim N
input  x : f32[N, 3, 4]
input  w : f32[1, 4, 2]
input  c : f32[1, 3, 2]
output a : f32[N, 3, 3]
output b : f32[N, 4, 3]
output d : f32[N, 3, 2]
output e : f32[N, 3, 6]
output f : f32[2, N, 3, 2]
output h : f32[N, 3, 2]
a      = slice(x, 1, 4, axis=-1)
b      = transpose(x)
d      = x @ w
e      = concat(x, c, axis=2)
f      = transpose(reshape(x, [N, 3, 2, 2]), [3, 0, 1, 2])
x1, x2 = split(x, [2, 2], axis=-1)
h      = cast(cast(x2 * 10, i32), f32) - x1
`)
	in, full := setup(t, g, map[string]int64{"N": 3}, 4)
	res := run(t, g, full, in)
	x, w, c := in["x"], in["w"], in["c"]
	var a, b, d, e, f, h []float64
	for n := range 3 {
		for i := range 3 {
			for j := 1; j < 4; j++ {
				a = append(a, x.At(n, i, j))
			}
			for j := range 2 {
				s := 0.0
				for k := range 4 {
					s += x.At(n, i, k) * w.At(0, k, j)
				}
				d = append(d, s)
			}
			for j := range 6 {
				if j < 4 {
					e = append(e, x.At(n, i, j))
				} else {
					e = append(e, c.At(0, i, j-4))
				}
			}
			for j := range 2 {
				h = append(h, math.Trunc(x.At(n, i, 2+j)*10)-x.At(n, i, j))
			}
		}
		for j := range 4 {
			for i := range 3 {
				b = append(b, x.At(n, i, j))
			}
		}
	}
	for l := range 2 {
		for n := range 3 {
			for i := range 3 {
				for k := range 2 {
					f = append(f, x.At(n, i, k*2+l))
				}
			}
		}
	}
	for name, want := range map[string][]float64{"a": a, "b": b, "d": d, "e": e, "f": f, "h": h} {
		close(t, name, res.Outputs[name], want)
	}
}
