package golang

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/runtime"
)

// TestGenerateLadderPaged checks the paged spec's ladder: the page table
// is staged as such, the pool has a scratch page past the planned P (64)
// and the page ids room for a padded sequence each, and the sizes follow
// the dims given to New.
func TestGenerateLadderPaged(t *testing.T) {
	p, dims := planSpec(t, "paged_decode", false)
	src, err := Generate(p, dims, nil, "paged_decode", "kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{Name: "x", Kind: runtime.BatchRows, RowBytes: 2 * (2048 * d.S), Bytes: l.bufX.Bytes}`,
		`{Name: "kv_indptr", Kind: runtime.PageIndptr, Bytes: l.bufKvIndptr.Bytes}`,
		`{Name: "kv_pages", Kind: runtime.PageIDs, Bytes: l.bufKvPages.Bytes}`,
		`{Name: "kv_last", Kind: runtime.PageLast, Bytes: l.bufKvLast.Bytes}`,
		`Pages: &runtime.PageTable{Page: 16, Pages: d.P, Scratch: 64, NewTokens: d.S, MaxLen: d.S + d.T}`,
		"l.ladder.Step(batch, runtime.AsBytes(in.X), runtime.AsBytes(in.Pos), runtime.AsBytes(in.KvIndptr), runtime.AsBytes(in.KvPages), runtime.AsBytes(in.KvLast))",
		"ctx.Alloc(264)",     // kv_pages: 64 ids and one per padded sequence (B=2)
		"ctx.Alloc(2129920)", // kv: 65 pages of [2, 8, 16, 64] bf16
		"KvLast []int32",
		"the scratch page 64 past the pool",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("generated code lacks %q", want)
		}
	}
}

func TestLadderInputs(t *testing.T) {
	p, _ := planSpec(t, "paged_decode", false)
	ins, pt, err := LadderInputs(p.Graph, map[string]int64{"B": 4, "S": 1, "T": 100, "P": 30, "N": 40})
	if err != nil {
		t.Fatal(err)
	}
	want := []runtime.StepInput{
		{Name: "x", Kind: runtime.BatchRows, RowBytes: 2 * 2048, Bytes: 4 * 2048 * 2},
		{Name: "pos", Kind: runtime.BatchRows, RowBytes: 4, Bytes: 16},
		{Name: "kv_indptr", Kind: runtime.PageIndptr, Bytes: 20},
		{Name: "kv_pages", Kind: runtime.PageIDs, Bytes: 160},
		{Name: "kv_last", Kind: runtime.PageLast, Bytes: 16},
	}
	if len(ins) != len(want) {
		t.Fatalf("%d inputs, want %d", len(ins), len(want))
	}
	for i := range want {
		if ins[i] != want[i] {
			t.Errorf("input %d = %+v, want %+v", i, ins[i], want[i])
		}
	}
	if wantPT := (runtime.PageTable{Page: 16, Pages: 30, Scratch: 30, NewTokens: 1, MaxLen: 101}); pt == nil || *pt != wantPT {
		t.Errorf("page table %+v, want %+v", pt, wantPT)
	}
}

// TestNoLadder checks the layers a step cannot pad get a Ladder that says
// why.
func TestNoLadder(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"ragged", `layer r
dim B, S, T
const D = 32, H = 4, G = 2, Dh = 8
input  x         : f32[B, S, D]
input  pos       : i32[B, S]
input  kv_indptr : i32[B + 1]
param  wqkv      : f32[D, (H + 2*G)*Dh]
param  wo        : f32[H*Dh, D]
state  kv        : f32[2, B, G, T, Dh] @ ragged(indptr=kv_indptr)
output y         : f32[B, S, D]
q0, k0, v0 = split(x @ wqkv, [H*Dh, G*Dh, G*Dh], axis=-1)
q = transpose(rope(reshape(q0, [B, S, H, Dh]), pos), [0, 2, 1, 3])
k = transpose(rope(reshape(k0, [B, S, G, Dh]), pos), [0, 2, 1, 3])
v = transpose(reshape(v0, [B, S, G, Dh]), [0, 2, 1, 3])
K, V = append(kv, k, v)
a = softmax(causal(q @ transpose(K) / sqrt(Dh)), axis=-1) @ V
y = x + reshape(transpose(a, [0, 2, 1, 3]), [B, S, H*Dh]) @ wo
`, "state kv is ragged"},
		{"no batch", `layer nb
dim S
input x : f32[S, 8]
output y : f32[S, 8]
y = x * 2
`, "no batch dim B"},
		{"batch not leading", `layer nl
dim B, S
input x : f32[S, B, 8]
output y : f32[S, B, 8]
y = x * 2
`, "no leading batch axis"},
		{"packed", `layer p
dim B, N
input  x         : f32[N, 8] @ packed(indptr=qo_indptr)
input  qo_indptr : i32[B + 1]
output y         : f32[N, 8]
y = x * 2
`, "input x packs its prompts' tokens by qo_indptr"},
	} {
		g, err := frontend.Parse(tc.name+".fu", tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if m := analyzeLadder(g); !strings.Contains(m.why, tc.want) {
			t.Errorf("%s: why %q, want %q", tc.name, m.why, tc.want)
		}
		if _, _, err := LadderInputs(g, map[string]int64{"B": 1, "S": 1, "T": 1}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: LadderInputs: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestLinear(t *testing.T) {
	d := ir.Sym("T").Add(ir.Sym("S")).Mul(ir.Const(3)).Add(ir.Const(5))
	c0, coef, err := linear(d)
	if err != nil || c0 != 5 || coef["S"] != 3 || coef["T"] != 3 || len(coef) != 2 {
		t.Errorf("linear(%s) = %d, %v, %v", d, c0, coef, err)
	}
	if _, _, err := linear(ir.Sym("S").Mul(ir.Sym("T"))); err == nil {
		t.Error("S*T is linear?")
	}
}
