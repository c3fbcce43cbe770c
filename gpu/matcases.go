package gpu

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
)

// matLayer is one matmul with an epilogue, at sizes no tile divides: the
// GEMV (B·S ≤ 64 rows, tensor cores above one) and tensor-core GEMM paths,
// split-K and not, each epilogue the passes fuse into a matmul.
const matLayer = `
layer mat_{{name}}
dim B, S
const K = {{k}}, N = {{n}}
input  x : {{dt}}[{{xdims}}]
input  r : {{dt}}[B, S, N]
param  w : {{dt}}[K, {{wn}}]
param  c : {{dt}}[{{wn}}]
{{params}}output y : {{out}}[B, S, N]
{{body}}
`

// matEpilogue is a matLayer's epilogue: its weight's columns (a multiple
// of N) and its statements.
type matEpilogue struct {
	wn, body string
	f32      bool // the output is cast to f32
	// xdims is the left operand's dims as the input is stored (B, S, K
	// when empty).
	xdims string
	// params declares the layer's other params (a norm's weights).
	params string
}

var matEpilogues = map[string]matEpilogue{
	// bias and residual: the decode step's o and down projections
	"res": {"N", "y = r + (x @ w + c)", false, "", ""},
	// bias, then SwiGLU across the split halves of one weight (as gate/up)
	"swiglu": {"2*N", "g, u = split(x @ w + c, [N, N], axis=-1)\ny = silu(g) * u + r", false, "", ""},
	// the sum cast to f32, times the other input cast
	"cast": {"N", "y = cast(x @ w + c, f32) * cast(r, f32)", true, "", ""},
	// bias and residual over a left operand stored sequence-major, read
	// through a transposing view: its rows are not one stride apart
	"tres": {"N", "y = r + (transpose(x, [1, 0, 2]) @ w + c)", false, "S, B, K", ""},
	// RMSNorm of the left operand (the decode step's attention and MLP
	// norms), bias and residual
	"rmsres": {"N", "y = r + ((x * rsqrt(mean(x * x, axis=-1) + 1e-5) * g) @ w + c)", false, "", "param  g : {{dt}}[K]\n"},
	// RMSNorm of a value the layer also outputs (a residual sum), which
	// the norm's row kernel stores
	"zrms": {"N", "z = x * g + g\ny = r + ((z * rsqrt(mean(z * z, axis=-1) + 1e-5) * g) @ w + c)", false, "", "param  g : {{dt}}[K]\noutput z : {{dt}}[B, S, K]\n"},
	// LayerNorm with its bias (GPT-2's), its two statistics one pass each
	"lnres": {"N", "mu = mean(x, axis=-1)\nd = x - mu\nh = d * rsqrt(mean(d * d, axis=-1) + 1e-5) * g + e\ny = r + (h @ w + c)", false, "", "param  g : {{dt}}[K]\nparam  e : {{dt}}[K]\n"},
}

// MatLayer builds mat_<epilogue>_<dtype>_<K>x<N> (matEpilogues; bf16 or
// f16).
func MatLayer(variant string) (*ir.Graph, error) {
	var epi, dt string
	var k, n int64
	if _, err := fmt.Sscanf(strings.ReplaceAll(variant, "_", " "), "%s %s %dx%d", &epi, &dt, &k, &n); err != nil {
		return nil, fmt.Errorf("matmul layer %q: want EPILOGUE_DTYPE_KxN: %w", variant, err)
	}
	e, ok := matEpilogues[epi]
	if !ok || (dt != "bf16" && dt != "f16") {
		return nil, fmt.Errorf("no matmul layer %q", variant)
	}
	out := dt
	if e.f32 {
		out = "f32"
	}
	xdims := e.xdims
	if xdims == "" {
		xdims = "B, S, K"
	}
	src := strings.ReplaceAll(matLayer, "{{params}}", e.params)
	for key, v := range map[string]string{"name": variant, "k": fmt.Sprint(k), "n": fmt.Sprint(n), "dt": dt, "wn": e.wn, "out": out, "body": e.body, "xdims": xdims} {
		src = strings.ReplaceAll(src, "{{"+key+"}}", v)
	}
	return frontend.Parse("mat_"+variant+".fu", src)
}

// matCases are the matmul cases: rows M = B·S of 1, 2, 3, 7, 8, 9, 15, 16,
// 17 and 63 (GEMV: CUDA cores for one row and for operands not 16-byte
// aligned, tensor cores in n8 tiles of 1, 2, 4 and 8 otherwise) and 65
// (tensor-core GEMM), K and N multiples of 8 and not. A K of 4104
// over N of 120 splits K (one column tile fills few SMs); N of 1000 streams
// whole 256-column tiles and a partial one.
func matCases() []struct {
	variant string
	dims    map[string]int64
} {
	type mc = struct {
		variant string
		dims    map[string]int64
	}
	var out []mc
	seen := map[string]bool{}
	add := func(variant string, b, s int64) {
		if key := fmt.Sprint(variant, b, s); !seen[key] {
			seen[key] = true
			out = append(out, mc{variant, map[string]int64{"B": b, "S": s}})
		}
	}
	shapes := []string{"res_bf16_4104x120", "swiglu_bf16_1000x1000", "cast_bf16_1001x517", "res_f16_777x260"}
	for i, m := range []int64{1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 65} {
		add(shapes[i%len(shapes)], m, 1)
	}
	// every shape at one row and at sixteen (two sequences of eight)
	for _, s := range shapes {
		add(s, 1, 1)
		add(s, 2, 8)
	}
	// f16 on the tensor-core GEMV (the f16 shape above has rows 8-byte
	// aligned only): 16 rows, K not a multiple of the 16-row step, split-K
	add("swiglu_f16_776x136", 2, 8)
	// The wgmma GEMM (sm_90a) at rows no 128-row tile divides: K past the
	// last whole 64-position stage (4104, 1000, 776, 1032), a partial
	// column tile (120, 136, 200), SwiGLU halves in one tile (bf16 and
	// f16); more tiles than blocks, over two groups of row blocks, at 2500
	// rows by 2560 columns; the tensor copy engine's stages in bf16 and
	// f16 (4104x120, 136x2560, 1032x200), and the cp.async stages of a
	// kernel that has the engine's, its left operand's rows not one stride
	// apart (tres); and N of 4097 and 17, whose rows are not 16-byte
	// aligned (the CUDA-core fallback). Where the wgmma GEMM's tiles leave
	// SMs idle and K is long (all its cases but 136x2560), K is split over
	// the blocks of clusters of two (plan.GemmWGSplits); at 769 rows by
	// 4680 columns, 133 tiles over K of 2600, 132 run unsplit, a block
	// each, and the last is split over a cluster (plan.Launch.SplitTail).
	add("res_bf16_4104x120", 3, 100)
	add("swiglu_bf16_1000x1000", 1, 129)
	add("swiglu_f16_776x136", 2, 100)
	add("res_bf16_136x2560", 1, 2500)
	add("res_bf16_512x4097", 1, 200)
	add("res_f16_1032x200", 2, 150)
	add("tres_bf16_1032x200", 3, 50)
	add("cast_bf16_264x17", 3, 71)
	add("res_bf16_2600x4680", 1, 769)
	// One row over columns that 256-column tiles would spread over half
	// the SMs or fewer: narrower tiles fill them, K unsplit
	// (plan.GemvNarrowStep): 125 tiles of 8 gate and 8 up columns
	// (swiglu 1000x1000 above), 129 of 16 at K 777 with a partial last
	// tile (cast), 129 of 32 over rows not 16-byte aligned (4099), 94 of
	// 32 in f16 with a partial last tile; and where 16-slot tiles leave
	// half the SMs idle but each holds all its weight in flight
	// (plan.GemvBlockInFlight), those tiles: 33 over 517 columns (cast
	// above), 17 over 260 in f16. 120 columns over K 4104 split K.
	add("cast_bf16_777x2056", 1, 1)
	add("res_bf16_1000x4099", 1, 1)
	add("res_f16_1032x3000", 1, 1)
	// A norm of the left operand before the GEMV, a row kernel of its own:
	// RMSNorm over K 1001 (no 8-position vectors), LayerNorm
	// in f16 over K 777 at one row and at three (the tensor-core GEMV),
	// RMSNorm over K 5000 and over K 4104; and the norm of a value the
	// layer outputs too (zrms), over K 1001 and, in f16, over K 5000.
	add("rmsres_bf16_1001x517", 1, 1)
	add("lnres_f16_777x260", 1, 1)
	add("rmsres_bf16_5000x2056", 1, 1)
	add("rmsres_bf16_4104x120", 1, 1)
	add("lnres_f16_777x260", 3, 1)
	add("zrms_bf16_1001x517", 1, 1)
	add("zrms_f16_5000x2056", 1, 1)
	return out
}
