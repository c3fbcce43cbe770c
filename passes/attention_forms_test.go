package passes_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/interp"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
)

// attentionForm is one way of writing a = attention(q, K, V) in the layer
// of testdata/attention_forms/layer.fu.tmpl, or a spec of its own there.
type attentionForm struct {
	name  string
	decls string
	query string
	body  string
	file  string
	// variant is the attention node the form must plan to; empty for a
	// form the kernel cannot compute, whose refusal must contain explain.
	variant string
	explain string
}

const scaled = "scale=0.353553 causal" // 1/sqrt(8), causal

// attentionForms are the ways of writing one attention: the scale on the
// scores, on q, on K or split, as a division, a reciprocal, an rsqrt or a
// folded constant, before rope or after; the softmax as a call, in the safe
// and in the plain exp form; the mask before or after the scale; a bias
// constant along the keys; a bias varying along them (broadcast over
// sequences, heads or queries, subtracted, scaled afterwards, outside the
// mask, inside softcap); transposes written in several steps.
var attentionForms = []attentionForm{
	{name: "scale_scores", body: "a = softmax(causal(q @ transpose(K) / sqrt(Dh)), axis=-1) @ V", variant: scaled},
	{name: "scale_scores_split", body: "a = softmax(causal(q @ transpose(K) / 2 / sqrt(2)), axis=-1) @ V", variant: scaled},
	{name: "scale_q_div", body: "a = softmax(causal((q / sqrt(Dh)) @ transpose(K)), axis=-1) @ V", variant: scaled},
	{name: "scale_q_const_left", body: "a = softmax(causal((0.35355339059327373 * q) @ transpose(K)), axis=-1) @ V", variant: scaled},
	{name: "scale_q_reciprocal", body: "a = softmax(causal((q * (1 / sqrt(Dh))) @ transpose(K)), axis=-1) @ V", variant: scaled},
	{name: "scale_q_rsqrt", body: "a = softmax(causal((q * rsqrt(Dh)) @ transpose(K)), axis=-1) @ V", variant: scaled},
	{name: "scale_q_before_rope", query: "q = transpose(rope(reshape(q0 / sqrt(Dh), [B, S, H, Dh]), pos), [0, 2, 1, 3])", body: "a = softmax(causal(q @ transpose(K)), axis=-1) @ V", variant: scaled},
	{name: "scale_k", body: "a = softmax(causal(q @ transpose(K / sqrt(Dh))), axis=-1) @ V", variant: scaled},
	{name: "scale_kt", body: "a = softmax(causal(q @ (transpose(K) * rsqrt(Dh))), axis=-1) @ V", variant: scaled},
	{name: "scale_split_q_k", body: "a = softmax(causal((q * rsqrt(sqrt(Dh))) @ transpose(K * rsqrt(sqrt(Dh)))), axis=-1) @ V", variant: scaled},
	{name: "mask_before_scale", body: "a = softmax(causal(q @ transpose(K)) / sqrt(Dh), axis=-1) @ V", variant: scaled},
	{name: "mask_before_scale_const", body: "a = softmax(0.35355339059327373 * causal(q @ transpose(K)), axis=-1) @ V", variant: scaled},
	{name: "window_before_scale", body: "a = softmax(window(q @ transpose(K), 5) / sqrt(Dh), axis=-1) @ V", variant: "scale=0.353553 causal window=5"},
	{name: "window_after_scale_k", body: "a = softmax(window(q @ transpose(K / sqrt(Dh)), 5), axis=-1) @ V", variant: "scale=0.353553 causal window=5"},
	{name: "softmax_safe", body: "s = causal(q @ transpose(K) / sqrt(Dh))\ne = exp(s - max(s, axis=-1))\na = (e / sum(e, axis=-1)) @ V", variant: scaled},
	{name: "softmax_safe_repeated", body: "s = causal(q @ transpose(K) / sqrt(Dh))\na = (exp(s - max(s, axis=-1)) / sum(exp(s - max(s, axis=-1)), axis=-1)) @ V", variant: scaled},
	{name: "softmax_plain_exp", body: "e = exp(causal(q @ transpose(K) / sqrt(Dh)))\na = (e / sum(e, axis=-1)) @ V", variant: scaled},
	{name: "softmax_plain_exp_scale_q", body: "e = exp(causal((q / sqrt(Dh)) @ transpose(K)))\na = (e / sum(e, axis=-1)) @ V", variant: scaled},
	{name: "softmax_reciprocal_sum", body: "e = exp(causal(q @ transpose(K) / sqrt(Dh)))\na = (e * (1 / sum(e, axis=-1))) @ V", variant: scaled},
	{name: "softmax_max_subtracted", body: "s = causal(q @ transpose(K) / sqrt(Dh))\na = softmax(s - max(s, axis=-1), axis=-1) @ V", variant: scaled},
	{name: "bias_scalar", body: "a = softmax(causal(q @ transpose(K) / sqrt(Dh) + 3), axis=-1) @ V", variant: scaled},
	{name: "bias_per_head", decls: "param hb : f32[H, 1, 1]", body: "a = softmax(causal(hb + q @ transpose(K) / sqrt(Dh)), axis=-1) @ V", variant: scaled},
	{name: "keys_named_transpose", body: "Kt = transpose(K, [0, 1, 3, 2])\na = softmax(causal(q @ Kt / sqrt(Dh)), axis=-1) @ V", variant: scaled},
	{name: "keys_two_transposes", body: "a = softmax(causal(q @ transpose(transpose(K, [0, 2, 1, 3]), [0, 2, 3, 1]) / sqrt(Dh)), axis=-1) @ V", variant: scaled},
	{name: "keys_identity_reshape", body: "a = softmax(causal(q @ transpose(reshape(K, [B, G, T + S, Dh])) / sqrt(Dh)), axis=-1) @ V", variant: scaled},
	{name: "query_two_transposes", query: "q = transpose(transpose(rope(reshape(q0, [B, S, H, Dh]), pos), [0, 2, 3, 1]))", body: "a = softmax(causal(q @ transpose(K) / sqrt(Dh)), axis=-1) @ V", variant: scaled},
	{name: "keys_stored_transposed", file: "keys_stored_transposed.fu", variant: "scale=0.353553 keys=transposed"},
	{name: "keys_transposed_views", file: "keys_transposed_views.fu", variant: "scale=0.353553 bias=1 causal keys=transposed"},
	{name: "softcap", body: "a = softmax(causal(softcap(q @ transpose(K) / sqrt(Dh), 2)), axis=-1) @ V", variant: "scale=0.353553 causal softcap=2"},

	{name: "bias_per_key", decls: "input kb : f32[B, 1, S, T + S]", body: "a = softmax(causal(q @ transpose(K) / sqrt(Dh) + kb), axis=-1) @ V", variant: "scale=0.353553 bias=1 causal"},
	{name: "bias_alibi_heads", decls: "input ab : f32[H, 1, T + S]", body: "a = softmax(causal(ab + q @ transpose(K) / sqrt(Dh)), axis=-1) @ V", variant: "scale=0.353553 bias=1 causal"},
	{name: "bias_full_left", decls: "input kb : f32[B, H, S, T + S]", body: "a = softmax(causal(kb + q @ transpose(K) / sqrt(Dh)), axis=-1) @ V", variant: "scale=0.353553 bias=1 causal"},
	{name: "bias_keys_only", decls: "input kb : f32[T + S]", body: "a = softmax(causal(q @ transpose(K) / sqrt(Dh) - kb), axis=-1) @ V", variant: "scale=0.353553 bias=-1 causal"},
	{name: "bias_scaled_after", decls: "input kb : f32[1, H, S, T + S]", body: "a = softmax(causal((q @ transpose(K) + kb) / sqrt(Dh)), axis=-1) @ V", variant: "scale=0.353553 bias=0.353553 causal"},
	{name: "bias_outside_mask", decls: "input kb : f32[B, 1, S, T + S]", body: "a = softmax(causal(q @ transpose(K) / sqrt(Dh)) + kb, axis=-1) @ V", variant: "scale=0.353553 bias=1 causal"},
	{name: "bias_in_softcap", decls: "input kb : f32[B, 1, S, T + S]", body: "a = softmax(causal(softcap(q @ transpose(K) / sqrt(Dh) + kb, 2)), axis=-1) @ V", variant: "scale=0.353553 bias=1 causal softcap=2"},
	{name: "bias_window_f16", decls: "input kb : f16[1, H, 1, T + S]", body: "a = softmax(window(q @ transpose(K) / sqrt(Dh) + cast(kb, f32), 5), axis=-1) @ V", variant: "scale=0.353553 bias=1 causal window=5"},

	{name: "refused_bias_after_softcap", decls: "input kb : f32[B, 1, S, T + S]", body: "a = softmax(causal(softcap(q @ transpose(K) / sqrt(Dh), 2) + kb), axis=-1) @ V",
		explain: "is added after softcap; the attention kernel adds a bias before the cap"},
	{name: "refused_two_biases", decls: "input kb : f32[B, 1, S, T + S]\ninput kc : f32[1, H, S, T + S]", body: "a = softmax(causal(q @ transpose(K) / sqrt(Dh) + kb + kc), axis=-1) @ V",
		explain: "a second bias varying along the keys"},
	{name: "refused_bias_in_softcap", body: "a = softmax(causal(softcap(q @ transpose(K) / sqrt(Dh) + 1, 2)), axis=-1) @ V",
		explain: "shifts the scores inside softcap"},
	{name: "refused_keys_transposed_cascade", file: "keys_transposed_cascade.fu", explain: "are a concat along the keys: a cascade's kernels read its keys as rows"},
	{name: "refused_keys_other_layout", file: "keys_other_layout.fu", explain: "a copy the attention kernel does not make"},
	{name: "refused_sum_of_other", body: "s = causal(q @ transpose(K) / sqrt(Dh))\na = (exp(s) / sum(exp(s - 1), axis=-1)) @ V",
		explain: "not of the exponentials themselves: not a softmax"},
	{name: "refused_not_softmax", body: "e = exp(causal(q @ transpose(K) / sqrt(Dh)))\na = (e / max(e, axis=-1)) @ V",
		explain: "are div, not softmax(s) or exp(s) / sum(exp(s)) over the keys"},
	{name: "refused_score_op", body: "a = softmax(causal(tanh(q @ transpose(K))), axis=-1) @ V",
		explain: "tanh %"},
}

// formGraph builds the form's spec, or the template's layer with the form.
func formGraph(t *testing.T, f attentionForm) *ir.Graph {
	t.Helper()
	file := f.file
	if file == "" {
		file = "layer.fu.tmpl"
	}
	text, err := os.ReadFile(filepath.Join("testdata", "attention_forms", file))
	if err != nil {
		t.Fatal(err)
	}
	query := f.query
	if query == "" {
		query = "q = transpose(rope(reshape(q0, [B, S, H, Dh]), pos), [0, 2, 1, 3])"
	}
	src := strings.NewReplacer("{{decls}}", f.decls, "{{query}}", query, "{{attention}}", f.body).Replace(string(text))
	g, err := frontend.Parse(f.name+".fu", src)
	if err != nil {
		t.Fatalf("form does not build: %v\n%s", err, src)
	}
	return g
}

// TestAttentionForms plans every form at a decode step (S=1 over a cache)
// and a prefill (S=17: 34 query rows a kv head, past the decode kernel's
// 16) and checks that the fused plan has exactly one attention kernel, of
// the form's variant and that step's launch, and as many kernels as the
// plain form (no rescaled copy of the cache, no separate softmax), or, for
// a form the kernel cannot compute, none and the reason in the log; and
// that the fused plan run by the CPU interpreter equals the written graph.
func TestAttentionForms(t *testing.T) {
	for _, step := range []struct {
		name string
		dims map[string]int64
	}{{"decode", map[string]int64{"B": 2, "S": 1, "T": 9}}, {"prefill", map[string]int64{"B": 2, "S": 17, "T": 3}}} {
		plain := fusedPlan(t, formGraph(t, attentionForms[0]), step.dims)
		for i, f := range attentionForms {
			t.Run(step.name+"/"+f.name, func(t *testing.T) {
				g := formGraph(t, f)
				st, err := passes.Run(g, passes.Fused, passes.Options{Dims: step.dims})
				if err != nil {
					t.Fatal(err)
				}
				variants := attentionVariants(st)
				kernels, launch := attentionKernels(st.Plan)
				if f.variant == "" {
					if kernels != 0 || !logHas(st, f.explain) {
						t.Errorf("%d attention kernels, want none and a log naming %q:\n%s", kernels, f.explain, logText(st))
					}
				} else {
					if kernels != 1 || len(variants) != 1 || variants[0] != f.variant {
						t.Errorf("%d attention kernels of %q, want one %q:\n%s", kernels, variants, f.variant, logText(st))
					}
					// The forms are f32, which the CUDA-core kernels run.
					if launch != step.name+"-simt" {
						t.Errorf("the attention kernel runs %s, want %s-simt", launch, step.name)
					}
					if n := len(st.Plan.Kernels); n != len(plain.Kernels) {
						t.Errorf("%d kernels, the plain form has %d:\n%s", n, len(plain.Kernels), st.Plan)
					}
				}
				if err := planEqualsGraph(g, st.Plan, step.dims, int64(i)); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

func fusedPlan(t *testing.T, g *ir.Graph, dims map[string]int64) *plan.Plan {
	t.Helper()
	return fusedState(t, g, dims).Plan
}

// attentionKernels counts the plan's attention kernels and returns the
// launch variant (decode or prefill) of the last.
func attentionKernels(p *plan.Plan) (int, string) {
	n, variant := 0, ""
	for _, k := range p.Kernels {
		if k.Strategy == plan.Attention {
			n, variant = n+1, k.Launch.Variant.String()
		}
	}
	return n, variant
}

func logText(st *passes.State) string {
	var log []string
	for _, d := range st.Log {
		log = append(log, d.String())
	}
	return strings.Join(log, "\n")
}

func logHas(st *passes.State, want string) bool { return strings.Contains(logText(st), want) }

// planEqualsGraph runs the plan with the CPU interpreter and the written
// graph with the reference interpreter on the same random inputs and
// compares outputs and states. Both compute in float64 and the plan only
// reorders the arithmetic (online softmax, a moved scale), so they agree to
// 1e-12 of the tensor's scale.
func planEqualsGraph(g *ir.Graph, p *plan.Plan, dims map[string]int64, seed int64) error {
	in, err := interp.RandomInputs(g, dims, seed)
	if err != nil {
		return err
	}
	want, err := interp.Run(g, dims, in, interp.Options{})
	if err != nil {
		return fmt.Errorf("written graph: %w", err)
	}
	got, err := interp.RunPlan(p, dims, in, interp.PlanOptions{})
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	return sameResults(got, want)
}

// sameResults compares got's outputs and states with want's to 1e-12 of
// each tensor's scale.
func sameResults(got, want *interp.Result) error {
	for what, pair := range map[string][2]map[string]*interp.Tensor{"output": {got.Outputs, want.Outputs}, "state": {got.States, want.States}} {
		for name, w := range pair[1] {
			if e := relDiff(pair[0][name], w); !(e <= 1e-12) {
				return fmt.Errorf("%s %s: relative difference %.3g", what, name, e)
			}
		}
	}
	return nil
}

// relDiff is max|got-want| / max|want|, NaN when a value is NaN or the
// tensors differ in size, and +Inf when got is missing or want is all zeros
// (the comparison would check nothing).
func relDiff(got, want *interp.Tensor) float64 {
	if got == nil || len(got.Data) != len(want.Data) {
		return math.Inf(1)
	}
	num, den := 0.0, 0.0
	for i, w := range want.Data {
		d := math.Abs(got.Data[i] - w)
		if math.IsNaN(d) {
			return math.NaN()
		}
		num, den = math.Max(num, d), math.Max(den, math.Abs(w))
	}
	if den == 0 {
		return math.Inf(1)
	}
	return num / den
}
