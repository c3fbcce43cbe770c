package ir_test

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/ir"
)

// TestInferVarlenAttention checks the varlen attention node's typing:
// packed q [H, N, Dh] over K and V [B, G, T, Dh] of the indptr's B
// sequences gives q's type, packed alike; the variant and the operands must
// agree.
func TestInferVarlenAttention(t *testing.T) {
	B, N, T := ir.Sym("B"), ir.Sym("N"), ir.Sym("T")
	c := ir.Const
	indptr := leaf(ir.OpInput, ir.I32, B.Add(c(1)))
	packed := func(axis int, shape ...ir.Dim) *ir.Value {
		v := leaf(ir.OpInput, ir.F32, shape...)
		v.Packed = &ir.Packed{Axis: axis, Indptr: indptr}
		return v
	}
	kv := func(shape ...ir.Dim) *ir.Value { return leaf(ir.OpInput, ir.F32, shape...) }
	q := packed(1, c(6), N, c(8))
	tests := []struct {
		name string
		at   ir.Attention
		args []*ir.Value
		want string
	}{
		{"gqa", ir.Attention{Varlen: true}, []*ir.Value{q, kv(B, c(2), T, c(8)), kv(B, c(2), T, c(8))}, ""},
		{"no varlen flag", ir.Attention{}, []*ir.Value{q, kv(B, c(2), T, c(8)), kv(B, c(2), T, c(8))}, "needs the varlen variant"},
		{"unpacked queries", ir.Attention{Varlen: true}, []*ir.Value{kv(c(6), N, c(8)), kv(B, c(2), T, c(8)), kv(B, c(2), T, c(8))}, "queries packed on their token axis"},
		{"bias", ir.Attention{Varlen: true, Bias: true}, []*ir.Value{q, kv(B, c(2), T, c(8)), kv(B, c(2), T, c(8)), kv(T)}, "no cascade, bias"},
		{"tokens not on axis 1", ir.Attention{Varlen: true}, []*ir.Value{packed(0, N, c(6), c(8)), kv(B, c(2), T, c(8)), kv(B, c(2), T, c(8))}, "packed on axis 1"},
		{"keys of other sequences", ir.Attention{Varlen: true}, []*ir.Value{q, kv(c(3), c(2), T, c(8)), kv(c(3), c(2), T, c(8))}, "are not of the B sequences"},
		{"K and V differ", ir.Attention{Varlen: true}, []*ir.Value{q, kv(B, c(2), T, c(8)), kv(B, c(2), T.Add(c(1)), c(8))}, "must be [B, G, T, 8]"},
		{"heads not dividing", ir.Attention{Varlen: true}, []*ir.Value{q, kv(B, c(4), T, c(8)), kv(B, c(4), T, c(8))}, "4 kv heads do not divide 6"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at := tc.at
			at.Scale = 1
			res, err := ir.Infer(&ir.Node{Op: ir.OpAttention, Args: tc.args, Attr: ir.Attr{Attn: &at}})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p := res[0].Packed; !res[0].Type.Shape.Equal(q.Type.Shape) || p == nil || p.Axis != 1 || p.Indptr != indptr {
					t.Fatalf("result %s packed %+v, want the query's type, packed alike", res[0].Type, p)
				}
				return
			}
			if err == nil || !strings.Contains(err.Msg, tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
