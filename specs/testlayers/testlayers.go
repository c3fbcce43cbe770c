// Package testlayers builds the small layers that the tests of several
// packages share (interp's plan tests, the on-device suite of gpu): the
// embedded specs with their model constants shrunk, so that the float64
// reference stays fast, and a small layer around one attention of each
// variant.
package testlayers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/parser"
	"github.com/fuser-dev/fuser/specs"
)

// SmallConsts are the model constants of the shrunk specs: D=32, 4 query heads over 2 kv heads of 8, F=48, 4 experts,
// a window of 37 tokens (a spec keeps the constants it does not declare).
var SmallConsts = map[string]string{"D": "32", "H": "4", "G": "2", "Dh": "8", "F": "48", "E": "4", "W": "37"}

// smallOverrides keep a spec's head grouping: qwen_bias has 7 query heads
// per kv head.
var smallOverrides = map[string]map[string]string{"qwen_bias": {"H": "14", "G": "2"}}

// Small returns the embedded spec name with its model constants replaced
// by SmallConsts; tiny is returned as it is.
func Small(name string) (*ir.Graph, error) {
	file, src, ok := specs.Source(name)
	if !ok {
		return nil, fmt.Errorf("no spec %s", name)
	}
	f, err := parser.Parse(file, src)
	if err != nil {
		return nil, err
	}
	if name != "tiny" {
		if replaced := shrink(f, smallOverrides[name]); replaced < 4 {
			return nil, fmt.Errorf("spec %s: replaced %d constants only", name, replaced)
		}
	}
	return frontend.Build(f)
}

// shrink sets the value of every const declaration of f named in
// overrides or SmallConsts to that number literal (at the position of the
// value it replaces), and returns how many it set.
func shrink(f *parser.File, overrides map[string]string) int {
	replaced := 0
	for _, s := range f.Stmts {
		if s.Consts == nil {
			continue
		}
		for _, c := range s.Consts.Items {
			v, ok := overrides[c.Name]
			if !ok {
				v, ok = SmallConsts[c.Name]
			}
			if ok {
				pos := c.Value.Pos
				c.Value = &parser.Expr{Pos: pos, Left: &parser.Term{Pos: pos, Left: &parser.Unary{Pos: pos, Primary: &parser.Primary{Pos: pos, Number: &v}}}}
				replaced++
			}
		}
	}
	return replaced
}

// attnLayer is a small layer around one attention of each variant: D=32, 4 query heads over 2 kv heads of 8, rope, a cache appended
// to; f32 throughout.
const attnLayer = `
layer attn_{{name}}
dim B, S, T{{dims}}
const D = 32, {{heads}}, Dh = 8
input  x    : f32[B, S, D]
input  pos  : i32[B, S]
{{inputs}}
param  wqkv : f32[D, (H + 2*G)*Dh]
param  wo   : f32[H*Dh, D]
{{prefix}}
state  kv   : f32[2, B, G, T, Dh] {{layout}}
output y    : f32[B, S, D]

q0, k0, v0 = split(x @ wqkv, [H*Dh, G*Dh, G*Dh], axis=-1)
q    = transpose(rope(reshape(q0, [B, S, H, Dh]), pos), [0, 2, 1, 3])
k    = transpose(rope(reshape(k0, [B, S, G, Dh]), pos), [0, 2, 1, 3])
v    = transpose(reshape(v0, [B, S, G, Dh]), [0, 2, 1, 3])
K, V = append(kv, k, v)
{{keys}}
a    = softmax({{score}}, axis=-1) @ Vs
y    = x + reshape(transpose(a, [0, 2, 1, 3]), [B, S, H*Dh]) @ wo
`

// AttnLayers are the attention variants of attnLayer, among them the ragged
// and paged KV layouts, which no shipped spec but paged_decode has. Subs
// are the template's substitutions, as pairs: placeholder, text.
var AttnLayers = []struct {
	Name string
	Subs []string
}{
	{"causal", []string{"score", "causal(q @ transpose(Ks) / sqrt(Dh))"}},
	{"window", []string{"score", "window(q @ transpose(Ks) / sqrt(Dh), 700)"}},
	{"softcap", []string{"score", "causal(softcap(q @ transpose(Ks) / sqrt(Dh) * 8, 2))"}},
	{"paged", []string{"score", "causal(q @ transpose(Ks) / sqrt(Dh))", "dims", ", P, N",
		"inputs", "input kv_indptr : i32[B + 1]\ninput kv_pages : i32[N]\ninput kv_last : i32[B]",
		"layout", "@ paged(page=16, pages=P, indptr=kv_indptr, indices=kv_pages, last=kv_last)"}},
	{"ragged", []string{"score", "window(q @ transpose(Ks) / sqrt(Dh), 1000)",
		"inputs", "input kv_indptr : i32[B + 1]", "layout", "@ ragged(indptr=kv_indptr)"}},
	{"cascade", []string{"score", "causal(q @ transpose(Ks) / sqrt(Dh))", "dims", ", L",
		"prefix", "state prefix : f32[2, 1, G, L, Dh]",
		"keys", "pk, pv = split(prefix, [1, 1], axis=0)\nKs = concat(reshape(pk, [1, G, L, Dh]), K, axis=2)\nVs = concat(reshape(pv, [1, G, L, Dh]), V, axis=2)"}},
}

// BiasLayers are attention variants of attnLayer with a score bias that
// varies along the keys: one a sequence and query shared by the heads, and
// an ALiBi-like one a head shared by the sequences and queries under a
// window, subtracted and scaled after the addition.
var BiasLayers = []struct {
	Name string
	Subs []string
}{
	{"bias", []string{"score", "causal(q @ transpose(Ks) / sqrt(Dh) + kb)", "inputs", "input kb : f32[B, 1, S, T + S]"}},
	{"alibi", []string{"score", "window((q @ transpose(Ks) - ab) / sqrt(Dh), 700)", "inputs", "input ab : f32[H, 1, T + S]"}},
}

// AttnLayer builds one variant of AttnLayers or BiasLayers.
func AttnLayer(variant string) (*ir.Graph, error) {
	for _, l := range slices.Concat(AttnLayers, BiasLayers) {
		if l.Name == variant {
			return Attn(variant, l.Subs)
		}
	}
	return nil, fmt.Errorf("no attention layer %q", variant)
}

// Attn builds attnLayer named attn_<name> with the substitutions subs
// (pairs: placeholder, text) over the defaults: causal attention of 4
// query heads over 2 kv heads on a contiguous cache.
func Attn(name string, subs []string) (*ir.Graph, error) {
	s := map[string]string{"name": name, "heads": "H = 4, G = 2", "dims": "", "inputs": "", "prefix": "", "layout": "", "keys": "Ks = K\nVs = V"}
	for i := 0; i+1 < len(subs); i += 2 {
		s[subs[i]] = subs[i+1]
	}
	src := attnLayer
	for k, v := range s {
		src = strings.ReplaceAll(src, "{{"+k+"}}", v)
	}
	return frontend.Parse("attn_"+name+".fu", src)
}
