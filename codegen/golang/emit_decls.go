package golang

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// emitDecls emits the embedded PTX, Dims, Planned, ArenaBytes, the entry
// table and the dims check.
func (l *layer) emitDecls(f *jen.File, ptxName string) {
	f.Comment("ptx holds the kernels, compiled from the plan's CUDA source.")
	f.Comment("")
	f.Comment("//go:embed " + ptxName)
	f.Var().Id("ptx").String()

	f.Comment("Dims are the layer's dims, passed to every kernel in this order.")
	f.Type().Id("Dims").StructFunc(func(g *jen.Group) {
		for _, d := range l.dims {
			g.Id(d.Field).Int64()
		}
	})

	f.Comment("Planned are the dims the plan was bound to: every buffer is sized and")
	f.Comment("every grid is shaped for them.")
	f.Var().Id("Planned").Op("=").Id("Dims").ValuesFunc(func(g *jen.Group) {
		for _, d := range l.dims {
			g.Id(d.Field).Op(":").Lit(int(d.Planned))
		}
	})

	f.Comment("ArenaBytes is the size of the arena of intermediates.")
	f.Const().Id("ArenaBytes").Op("=").Lit(int(l.arena))

	f.Comment("entries are the kernels' entry functions, in launch order.")
	f.Var().Id("entries").Op("=").Index(jen.Op("...")).String().ValuesFunc(func(g *jen.Group) {
		for _, la := range l.launches {
			g.Line().Lit(la.Entry)
		}
		g.Line()
	})

	f.Comment("check reports a dim outside 0..Planned: the grids and buffers are")
	f.Comment("those of the planned dims, and the kernels skip the work past the dims")
	f.Comment("they are given.")
	f.Func().Params(jen.Id("d").Id("Dims")).Id("check").Params().Error().BlockFunc(func(g *jen.Group) {
		for _, d := range l.dims {
			g.If(jen.Id("d").Dot(d.Field).Op("<").Lit(0).Op("||").Id("d").Dot(d.Field).Op(">").Id("Planned").Dot(d.Field)).Block(
				jen.Return(jen.Qual("fmt", "Errorf").Call(
					jen.Lit(fmt.Sprintf("%s: dim %s = %%d outside 0..%%d", l.name, d.Dim)),
					jen.Id("d").Dot(d.Field), jen.Id("Planned").Dot(d.Field))),
			)
		}
		g.Return(jen.Nil())
	})
}

// emitLayer emits the Layer type, its buffer accessors and its buffer
// list. The buffers are unexported fields, handed out by value: the
// addresses New allocated are the ones every launch and every captured
// graph uses, and no API sets them.
func (l *layer) emitLayer(f *jen.File) {
	rt := func(name string) *jen.Statement { return jen.Qual(RuntimePath, name) }
	f.Comment(fmt.Sprintf("Layer is layer %s on the GPU. New allocates every buffer at the", l.name))
	f.Comment("planned dims, and the buffers keep their addresses, so captured graphs")
	f.Comment("stay valid; fill the inputs, params and states (through the accessors,")
	f.Comment("which hand out the buffers by value) before Forward.")
	f.Type().Id("Layer").StructFunc(func(g *jen.Group) {
		for _, b := range l.bufs {
			g.Id(fieldName(b.Field)).Add(rt("Buffer"))
		}
		g.Id(fieldName("Arena")).Add(rt("Buffer"))
		g.Line()
		g.Id("dims").Id("Dims")
		g.Id("module").Op("*").Add(rt("Module"))
		g.Id("kernels").Index(jen.Len(jen.Id("entries"))).Op("*").Add(rt("Kernel"))
		g.Id("stream").Op("*").Add(rt("Stream"))
		g.Id("graphs").Map(jen.Int()).Op("*").Add(rt("GraphExec"))
		g.Id("ladder").Op("*").Add(rt("Ladder"))
		if len(l.loadOnly) > 0 {
			g.Comment("ctx allocates again the params ReleaseParams freed.")
			g.Id("ctx").Op("*").Add(rt("Context"))
		}
	})
	for _, b := range l.bufs {
		size := fmt.Sprintf("%d bytes", b.Bytes)
		if b.Extra > 0 {
			size = fmt.Sprintf("%d bytes and %d more the ladder's padding uses", b.Bytes, b.Extra)
		}
		name := b.Value.Name
		if b.Role == "folded" {
			name = b.Value.Ref() + ", computed by the load stage"
		}
		f.Comment(fmt.Sprintf("%s is %s %s: %s, %s.", b.Field, b.Role, name, b.Value.Type, size))
		f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id(b.Field).Params().Add(rt("Buffer")).Block(
			jen.Return(jen.Id("l").Dot(fieldName(b.Field))),
		)
	}
	f.Comment("Arena holds the intermediates at the offsets of the memory plan.")
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("Arena").Params().Add(rt("Buffer")).Block(
		jen.Return(jen.Id("l").Dot(fieldName("Arena"))),
	)
	f.Comment("buffers lists the Layer's buffers.")
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("buffers").Params().Index().Op("*").Add(rt("Buffer")).Block(
		jen.Return(jen.Index().Op("*").Add(rt("Buffer")).ValuesFunc(func(g *jen.Group) {
			for _, b := range l.bufs {
				g.Op("&").Id("l").Dot(fieldName(b.Field))
			}
			g.Op("&").Id("l").Dot(fieldName("Arena"))
		})),
	)
}
