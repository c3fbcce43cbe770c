package passes_test

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/passes"
	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/specs"
)

// attentionCost is the modelled cost of the plan's attention kernel.
func attentionCost(t *testing.T, p *plan.Plan, dims map[string]int64) plan.Cost {
	t.Helper()
	cs, err := p.Costs(dims)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range p.Kernels {
		if k.Strategy == plan.Attention {
			return cs[i]
		}
	}
	t.Fatalf("no attention kernel:\n%s", p)
	return plan.Cost{}
}

// TestAttentionBiasBytes checks that the log says the bias was taken and
// the bias traffic of biased attention kernels against counts made by hand: beside the same kernel without the
// bias, HBM reads each distinct bias element some query sees once and L2
// serves the other reads, one a visible score (4 query heads over 2 kv
// heads of the forms' layer; T+S keys, query i at T+i under the causal
// mask). At decode (B2 S1 T9) every query sees all 10 keys: 2·4·10 reads.
// At prefill (B2 S17 T3) query i sees 4+i keys, 204 over the 17 queries,
// 2·4·204 reads; with a window of 5 it sees min(4+i, 5), 84 in all. A bias
// shared by the queries ([1, H, 1, N]) is read from HBM for its N keys a
// head, one per sequence and query ([B, 1, S, N]) for the keys its query
// sees.
func TestAttentionBiasBytes(t *testing.T) {
	decode := map[string]int64{"B": 2, "S": 1, "T": 9}
	prefill := map[string]int64{"B": 2, "S": 17, "T": 3}
	for _, c := range []struct {
		name    string
		dims    map[string]int64
		form    attentionForm
		plain   string
		hbm, l2 int64
	}{
		{"decode_heads", decode, attentionForm{decls: "input ab : f32[H, 1, T + S]", body: "a = softmax(causal(ab + q @ transpose(K) / sqrt(Dh)), axis=-1) @ V"},
			"a = softmax(causal(q @ transpose(K) / sqrt(Dh)), axis=-1) @ V", 4 * 10 * 4, (2*4*10 - 4*10) * 4},
		{"decode_sequences", decode, attentionForm{decls: "input kb : f32[B, 1, S, T + S]", body: "a = softmax(causal(q @ transpose(K) / sqrt(Dh) + kb), axis=-1) @ V"},
			"a = softmax(causal(q @ transpose(K) / sqrt(Dh)), axis=-1) @ V", 2 * 10 * 4, (2*4*10 - 2*10) * 4},
		{"prefill_heads", prefill, attentionForm{decls: "input ab : f32[H, 1, T + S]", body: "a = softmax(causal(ab + q @ transpose(K) / sqrt(Dh)), axis=-1) @ V"},
			"a = softmax(causal(q @ transpose(K) / sqrt(Dh)), axis=-1) @ V", 4 * 20 * 4, (2*4*204 - 4*20) * 4},
		{"prefill_sequences", prefill, attentionForm{decls: "input kb : f32[B, 1, S, T + S]", body: "a = softmax(causal(q @ transpose(K) / sqrt(Dh) + kb), axis=-1) @ V"},
			"a = softmax(causal(q @ transpose(K) / sqrt(Dh)), axis=-1) @ V", 2 * 204 * 4, (2*4*204 - 2*204) * 4},
		{"prefill_window_f16", prefill, attentionForm{decls: "input kb : f16[1, H, 1, T + S]", body: "a = softmax(window(q @ transpose(K) / sqrt(Dh) + cast(kb, f32), 5), axis=-1) @ V"},
			"a = softmax(window(q @ transpose(K) / sqrt(Dh), 5), axis=-1) @ V", 4 * 20 * 2, (2*4*84 - 4*20) * 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.form.name = c.name
			st := fusedState(t, formGraph(t, c.form), c.dims)
			if want := "which varies along the keys: the attention kernel adds it to each score"; !logHas(st, want) {
				t.Errorf("the log does not say %q:\n%s", want, logText(st))
			}
			biased := attentionCost(t, st.Plan, c.dims)
			plain := attentionCost(t, fusedPlan(t, formGraph(t, attentionForm{name: "plain", body: c.plain}), c.dims), c.dims)
			if hbm, l2 := biased.BytesRead-plain.BytesRead, biased.L2Bytes-plain.L2Bytes; hbm != c.hbm || l2 != c.l2 {
				t.Errorf("the bias reads %d bytes from HBM and %d from L2, want %d and %d", hbm, l2, c.hbm, c.l2)
			}
			if biased.BytesWritten != plain.BytesWritten || biased.Flops != plain.Flops {
				t.Errorf("the bias changed the bytes written %d or the FLOPs %d (without: %d, %d)", biased.BytesWritten, biased.Flops, plain.BytesWritten, plain.Flops)
			}
		})
	}
}

// TestAttentionBiasRefused checks the biases the attention kernels cannot
// take: over the keys of a paged cache (per-sequence lengths) and over a
// cascade's shared prefix and own keys. Neither plans an attention node,
// and the log says why.
func TestAttentionBiasRefused(t *testing.T) {
	for _, c := range []struct{ spec, decl, explain string }{
		{"paged_decode", "input kb : bf16[B, 1, S, T + S]", "of per-sequence lengths (a paged or ragged cache)"},
		{"cascade", "input kb : bf16[B, 1, S, L + T + S]", "over a cascade's shared prefix and own keys"},
	} {
		t.Run(c.spec, func(t *testing.T) {
			_, text, ok := specs.Source(c.spec)
			if !ok {
				t.Fatalf("no spec %s", c.spec)
			}
			const softmax = "p          = softmax(causal(s), axis=-1)"
			if !strings.Contains(text, softmax) {
				t.Fatalf("%s has no line %q", c.spec, softmax)
			}
			text = strings.Replace(text, softmax, c.decl+"\np = softmax(causal(s + kb), axis=-1)", 1)
			g, err := frontend.Parse(c.spec+".fu", text)
			if err != nil {
				t.Fatal(err)
			}
			st, err := passes.Run(g, passes.Fused, passes.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if v := attentionVariants(st); len(v) != 0 || !logHas(st, c.explain) {
				t.Errorf("attention nodes %q, want none and a log naming %q:\n%s", v, c.explain, logText(st))
			}
		})
	}
}
