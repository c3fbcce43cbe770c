package frontend

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/parser"
)

// layoutArgs lists the arguments each layout takes, all required.
var layoutArgs = map[string][]string{
	"contiguous": nil,
	"paged":      {"page", "pages", "indptr", "indices", "last"},
	"ragged":     {"indptr"},
	"packed":     {"indptr"},
}

// layout resolves a state's layout annotation. Paged and ragged caches get a
// seqlens node computing each sequence's length from the layout's inputs,
// and their token axis is marked ragged.
func (b *builder) layout(t *parser.TensorDecl) {
	l := t.Layout
	want, ok := layoutArgs[l.Name]
	if !ok {
		b.errorf(l.Pos, "layouts are contiguous, paged(...) and ragged(...)", "unknown layout %s", l.Name)
		return
	}
	args := map[string]*parser.Arg{}
	for _, a := range l.Args {
		if !contains(want, a.Name) {
			b.errorf(a.Pos, fmt.Sprintf("%s takes %v", l.Name, want), "unknown argument %q of layout %s", a.Name, l.Name)
			return
		}
		args[a.Name] = a
	}
	for _, w := range want {
		if args[w] == nil {
			b.errorf(l.Pos, fmt.Sprintf("%s takes %v", l.Name, want), "layout %s needs %s=", l.Name, w)
			return
		}
	}
	state := b.scope[t.Name].val
	if l.Name == "packed" {
		b.packed(t, state, args["indptr"])
		return
	}
	if state.Def.Op != ir.OpState {
		b.errorf(l.Pos, "an input's tokens may be packed: @ packed(indptr=qo_indptr)", "only a state can have layout %s", l.Name)
		return
	}
	if s := state.Type.Shape; l.Name != "contiguous" && (len(s) != 5 || !s[0].Equal(ir.Const(2))) {
		b.errorf(l.Pos, "a paged or ragged KV cache is declared with its logical shape [2, B, G, T, Dh]: K and V, batch, kv heads, tokens, head dim", "layout %s needs a state of shape [2, B, G, T, Dh], %s is %s", l.Name, t.Name, state.Type.Shape)
		return
	}
	lay := &ir.Layout{}
	switch l.Name {
	case "contiguous":
		return
	case "paged":
		lay.Kind = ir.Paged
		page, ok := b.intArg(args["page"])
		if !ok {
			return
		}
		if page < 1 || page&(page-1) != 0 {
			b.errorf(args["page"].Pos, "page sizes are powers of two from 1 to 128 or more", "page size %d is not a power of two", page)
			return
		}
		lay.Page = int64(page)
		if lay.Pages, ok = b.sizeExpr(args["pages"].Value); !ok {
			return
		}
		lay.Indices = b.layoutInput(args["indices"])
		lay.Last = b.layoutInput(args["last"])
	case "ragged":
		lay.Kind = ir.RaggedLayout
	}
	lay.Indptr = b.layoutInput(args["indptr"])
	if lay.Indptr == nil || lay.Kind == ir.Paged && (lay.Indices == nil || lay.Last == nil) {
		return
	}
	state.Def.Attr.Layout = lay
	lensArgs := []*ir.Value{lay.Indptr}
	if lay.Kind == ir.Paged {
		lensArgs = append(lensArgs, lay.Last)
	}
	lens := b.apply1(ir.OpSeqLens, l.Pos, ir.Attr{Num: float64(lay.Page)}, lensArgs...)
	if lens == nil {
		return
	}
	if s := state.Type.Shape; !lens.Type.Shape[0].Equal(s[1]) {
		b.errorf(l.Pos, "indptr has one entry more than the batch", "layout describes %s sequences, the cache has batch %s", lens.Type.Shape[0], s[1])
		return
	}
	state.Ragged = &ir.Ragged{Axis: 3, Batch: 1, Lens: lens}
}

// layoutInput resolves a layout argument naming an i32 input.
func (b *builder) layoutInput(a *parser.Arg) *ir.Value {
	name := ""
	if c := soleCall(a.Value); c != nil && !c.HasArgs {
		name = c.Name
	}
	bd, ok := b.scope[name]
	if !ok || bd.kind != "input" {
		b.errorf(a.Pos, "declare it: input "+name+" : i32[...]", "layout argument %s= must name a declared input", a.Name)
		return nil
	}
	if bd.val.Type.DType != ir.I32 || len(bd.val.Type.Shape) != 1 {
		b.errorf(a.Pos, "", "layout argument %s= must be a 1-D i32 input, %s is %s", a.Name, name, bd.val.Type)
		return nil
	}
	bd.used = true
	return bd.val
}

// packed resolves an input's packed layout: its first axis holds the tokens
// of the sequences of indptr back to back.
func (b *builder) packed(t *parser.TensorDecl, in *ir.Value, arg *parser.Arg) {
	if in.Def.Op != ir.OpInput {
		b.errorf(t.Layout.Pos, "declare the packed tokens as an input", "only an input can be packed, %s is a %s", t.Name, in.Def.Op)
		return
	}
	indptr := b.layoutInput(arg)
	if indptr == nil {
		return
	}
	if indptr == in {
		b.errorf(arg.Pos, "declare the indptr as an input of its own: input qo_indptr : i32[B + 1]", "%s cannot be its own indptr", t.Name)
		return
	}
	if len(in.Type.Shape) == 0 {
		b.errorf(t.Layout.Pos, "the first axis holds the tokens: x : bf16[N, D] @ packed(indptr=qo_indptr)", "a packed input needs a token axis, %s is %s", t.Name, in.Type)
		return
	}
	in.Packed = &ir.Packed{Axis: 0, Indptr: indptr}
}
