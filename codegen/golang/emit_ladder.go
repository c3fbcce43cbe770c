package golang

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/fuser-dev/fuser/runtime"
)

// kindName is the runtime constant of an input kind.
func kindName(k runtime.InputKind) string {
	switch k {
	case runtime.PageIndptr:
		return "PageIndptr"
	case runtime.PageIDs:
		return "PageIDs"
	case runtime.PageLast:
		return "PageLast"
	}
	return "BatchRows"
}

// emitLadder emits StepInputs, Ladder, Step, Buckets, Synchronize and
// Counts.
func (l *layer) emitLadder(f *jen.File) {
	rt := func(name string) *jen.Statement { return jen.Qual(RuntimePath, name) }
	recv := func() *jen.Statement { return jen.Params(jen.Id("l").Op("*").Id("Layer")) }
	m := l.ladder

	f.Comment("StepInputs are one step's host inputs for Step: each holds the step's")
	f.Comment("sequences only (batch rows; the page table of batch sequences), bf16")
	f.Comment("and f16 as their bits.")
	f.Type().Id("StepInputs").StructFunc(func(g *jen.Group) {
		for _, b := range l.bufs {
			if b.Role == "input" {
				g.Comment(fmt.Sprintf("%s is input %s: %s.", b.Field, b.Value.Name, b.Value.Type))
				g.Id(b.Field).Index().Id(elemName(b.Value.Type.DType))
			}
		}
	})

	for _, line := range l.ladderDoc() {
		f.Comment(line)
	}
	f.Func().Add(recv()).Id("Ladder").Params(jen.Id("buckets").Op("...").Int()).Error().BlockFunc(func(g *jen.Group) {
		if m.why != "" {
			g.Return(l.errorf("no graph ladder: " + strings.ReplaceAll(m.why, "%", "%%")))
			return
		}
		g.If(jen.Id("l").Dot("ladder").Op("!=").Nil()).Block(jen.Return(l.errorf("the ladder is captured already")))
		g.List(jen.Id("bs"), jen.Err()).Op(":=").Add(rt("Buckets")).Call(jen.Int().Call(jen.Id("Planned").Dot(l.dimField("B"))), jen.Id("buckets").Op("..."))
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(l.errorf("%w", jen.Err())))
		g.Id("d").Op(":=").Id("l").Dot("dims")
		spec := []jen.Code{
			jen.Id("Buckets").Op(":").Id("bs"),
			jen.Id("Inputs").Op(":").Index().Add(rt("StepInput")).ValuesFunc(func(g *jen.Group) {
				for _, in := range m.inputs {
					field := l.field[in.value]
					vals := []jen.Code{
						jen.Id("Name").Op(":").Lit(in.value.Name),
						jen.Id("Kind").Op(":").Add(rt(kindName(in.kind))),
					}
					if in.kind == runtime.BatchRows {
						vals = append(vals, jen.Id("RowBytes").Op(":").Lit(int(in.value.Type.DType.Size())).Op("*").Parens(l.dimCode(in.row, "d")))
					}
					vals = append(vals, jen.Id("Bytes").Op(":").Id("l").Dot(fieldName(field)).Dot("Bytes"))
					g.Line().Values(vals...)
				}
				g.Line()
			}),
			jen.Id("Buffers").Op(":").Index().Add(rt("Buffer")).ValuesFunc(func(g *jen.Group) {
				for _, in := range m.inputs {
					g.Id("l").Dot(fieldName(l.field[in.value]))
				}
			}),
		}
		if p := m.pages; p != nil {
			spec = append(spec, jen.Id("Pages").Op(":").Op("&").Add(rt("PageTable")).Values(
				jen.Id("Page").Op(":").Lit(int(p.page)),
				jen.Id("Pages").Op(":").Add(l.dimCode(p.pages, "d")),
				jen.Id("Scratch").Op(":").Lit(int(l.scratch)),
				jen.Id("NewTokens").Op(":").Add(l.dimCode(p.newTokens, "d")),
				jen.Id("MaxLen").Op(":").Add(l.dimCode(p.maxLen, "d")),
			))
		}
		g.Id("spec").Op(":=").Add(rt("LadderSpec")).Values(spec...)
		g.List(jen.Id("ladder"), jen.Err()).Op(":=").Add(rt("NewLadder")).Call(jen.Id("l").Dot("stream"), jen.Id("spec"),
			jen.Func().Params(jen.Id("bucket").Int()).Error().Block(
				jen.Id("c").Op(":=").Id("d"),
				jen.Id("c").Dot(l.dimField("B")).Op("=").Int64().Call(jen.Id("bucket")),
				jen.If(jen.Err().Op(":=").Id("c").Dot("check").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
				jen.Return(jen.Id("l").Dot("forward").Call(jen.Id("l").Dot("stream"), jen.Id("c"))),
			))
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(l.errorf("%w", jen.Err())))
		g.Id("l").Dot("ladder").Op("=").Id("ladder")
		g.Return(jen.Nil())
	})

	f.Comment("Step enqueues one decode step of batch sequences on the Layer's stream:")
	f.Comment("in copied into the Layer's input buffers and padded to the smallest")
	f.Comment("bucket of the ladder that holds batch, then that bucket's graph, one")
	f.Comment("launch; it returns the bucket. The outputs' rows past batch are padding.")
	f.Comment("in may be reused once Step returns; call Synchronize before reading the")
	f.Comment("outputs. A bad batch or input is an error, and then nothing is enqueued.")
	f.Func().Add(recv()).Id("Step").Params(jen.Id("batch").Int(), jen.Id("in").Id("StepInputs")).Params(jen.Int(), jen.Error()).BlockFunc(func(g *jen.Group) {
		g.If(jen.Id("l").Dot("ladder").Op("==").Nil()).Block(jen.Return(jen.Lit(0), l.errorf("Step before Ladder")))
		args := []jen.Code{jen.Id("batch")}
		for _, in := range m.inputs {
			args = append(args, rt("AsBytes").Call(jen.Id("in").Dot(l.field[in.value])))
		}
		g.List(jen.Id("bucket"), jen.Err()).Op(":=").Id("l").Dot("ladder").Dot("Step").Call(args...)
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), l.errorf("%w", jen.Err())))
		g.Return(jen.Id("bucket"), jen.Nil())
	})

	f.Comment("Buckets are the ladder's batch sizes (none before Ladder).")
	f.Func().Add(recv()).Id("Buckets").Params().Index().Int().Block(
		jen.If(jen.Id("l").Dot("ladder").Op("==").Nil()).Block(jen.Return(jen.Nil())),
		jen.Return(jen.Id("l").Dot("ladder").Dot("Buckets").Call()),
	)
	f.Comment("Synchronize waits for the work enqueued on the Layer's stream: the steps.")
	f.Func().Add(recv()).Id("Synchronize").Params().Error().Block(
		jen.Return(jen.Id("l").Dot("stream").Dot("Synchronize").Call()),
	)
	f.Comment("Counts are what has been enqueued on the Layer's stream (captures and")
	f.Comment("steps): a graph step adds one graph launch, and copies, which are not")
	f.Comment("launches.")
	f.Func().Add(recv()).Id("Counts").Params().Add(rt("Counts")).Block(
		jen.Return(jen.Id("l").Dot("stream").Dot("Counts").Call()),
	)
}

// ladderDoc is the doc comment of Ladder: what one graph serves, which
// depends on the layout of the layer's caches.
func (l *layer) ladderDoc() []string {
	doc := []string{
		"Ladder captures the step into one CUDA graph per bucket, on the Layer's",
		"stream: buckets, or runtime.DefaultBuckets clipped to Planned's batch. A",
		"bucket's graph is Forward at the dims given to New with the batch dim",
		"set to the bucket, over the Layer's own buffers; Step replays it. Close",
		"destroys the graphs. Prefill (S > 1) runs eagerly: Forward on a Layer",
		"made for it.",
	}
	m := l.ladder
	switch {
	case m.why != "":
		doc = append(doc, "", "This layer has no ladder ("+m.why+"):", "Ladder returns an error; run it with Forward.")
	case m.pages != nil:
		doc = append(doc, "",
			fmt.Sprintf("The cache %s is paged: the kernels read each sequence's length and", m.pages.state.Name),
			"pages from the page table Step copies into device buffers, so one graph",
			"per bucket serves every context length up to the T given to New. A",
			fmt.Sprintf("padded sequence owns one page, the scratch page %d past the pool,", l.scratch),
			"and appends there, never into a real sequence's page.")
	default:
		doc = append(doc, "",
			"The caches are contiguous, [2, B, G, T+S, Dh]: the batch and T are in",
			"their strides, which the kernels take from their dim arguments, baked",
			"into each graph. So a graph serves the T given to New only (a Layer",
			"per context length), and a step at a bucket reads and appends to a",
			"cache laid out for the bucket, [2, bucket, G, T+S, Dh]; the padded",
			"sequences' rows are their own, so they never touch a real sequence's.")
	}
	return doc
}
