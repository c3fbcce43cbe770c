package gpu

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
)

// opsLayer runs every element-wise function, max and min, negation,
// casts, slice, concat, gather and the reductions (over the last axis and
// over S) of LANGUAGE.md in one dtype, so that the device suite computes
// each op at least once per dtype (issue #19). The arguments of log and
// sqrt are kept positive so that the checks compare finite values. The
// LayerNorm n runs a row kernel's three passes over rows of 4100 (two
// block-wide steps of the row cache and a tail of 4), every other row's
// start not 16-byte aligned (the scalar path).
const opsLayer = `
layer ops_{{dt}}
dim B, S
const D = 200, E = 24, V = 37
input  x   : {{dt}}[B, S, D]
input  z   : {{dt}}[B, S, D]
input  u   : {{dt}}[B, S, 4100]
input  ids : i32[B, S]
param  tab : {{dt}}[V, E]
param  sc  : {{dt}}[D]
output y   : f32[B, S, D]
output r   : {{dt}}[B, S, 4]
output c   : {{dt}}[B, S, 2*E]
output t   : {{dt}}[B, 1, D]
output n   : {{dt}}[B, S, 4100]
a = log(x * x + 1) + sqrt(z * z + 0.5) - tanh(x) * sigmoid(z)
b = max(a, -x) - min(exp(-(z * z)), gelu(x)) + silu(z) * sc
y = cast(b, f32) / (cast(z, f32) * cast(z, f32) + 1)
h = slice(b, 17, 163, axis=-1)
r = concat(sum(h, axis=-1), max(h, axis=-1), mean(h, axis=-1), sum(rsqrt(x * x + 2), axis=-1), axis=-1)
g = gather(tab, ids)
c = concat(g, slice(x, 5, 5 + E, axis=-1) * g, axis=-1)
t = sum(x * z, axis=1)
m = u - mean(u, axis=-1)
n = m * rsqrt(mean(m * m, axis=-1) + 1e-5)
`

// opsDTypes are the dtypes the ops layers run in.
var opsDTypes = []string{"bf16", "f16", "f32", "fp8e4m3"}

// OpsLayer builds ops_<dtype> (opsDTypes).
func OpsLayer(dt string) (*ir.Graph, error) {
	ok := false
	for _, d := range opsDTypes {
		ok = ok || d == dt
	}
	if !ok {
		return nil, fmt.Errorf("ops layer: unknown dtype %q (want one of %s)", dt, strings.Join(opsDTypes, ", "))
	}
	return frontend.Parse("ops_"+dt+".fu", strings.ReplaceAll(opsLayer, "{{dt}}", dt))
}
