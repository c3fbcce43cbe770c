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

	f.Comment("check reports a dim outside 1..Planned: the grids and buffers are")
	f.Comment("those of the planned dims, and the kernels skip the work past the dims")
	f.Comment("they are given.")
	f.Func().Params(jen.Id("d").Id("Dims")).Id("check").Params().Error().BlockFunc(func(g *jen.Group) {
		for _, d := range l.dims {
			g.If(jen.Id("d").Dot(d.Field).Op("<").Lit(1).Op("||").Id("d").Dot(d.Field).Op(">").Id("Planned").Dot(d.Field)).Block(
				jen.Return(jen.Qual("fmt", "Errorf").Call(
					jen.Lit(fmt.Sprintf("%s: dim %s = %%d outside 1..%%d", l.name, d.Dim)),
					jen.Id("d").Dot(d.Field), jen.Id("Planned").Dot(d.Field))),
			)
		}
		g.Return(jen.Nil())
	})
}

// emitLayer emits the Layer type and its buffer list.
func (l *layer) emitLayer(f *jen.File) {
	f.Comment(fmt.Sprintf("Layer is layer %s on the GPU. New allocates every buffer at the", l.name))
	f.Comment("planned dims, and the buffers keep their addresses, so captured graphs")
	f.Comment("stay valid; fill the inputs, params and states before Forward.")
	f.Type().Id("Layer").StructFunc(func(g *jen.Group) {
		for _, b := range l.bufs {
			g.Comment(fmt.Sprintf("%s is %s %s: %s, %d bytes.", b.Field, b.Role, b.Value.Name, b.Value.Type, b.Bytes))
			g.Id(b.Field).Qual(RuntimePath, "Buffer")
		}
		g.Comment("Arena holds the intermediates at the offsets of the memory plan.")
		g.Id("Arena").Qual(RuntimePath, "Buffer")
		g.Line()
		g.Id("dims").Id("Dims")
		g.Id("module").Op("*").Qual(RuntimePath, "Module")
		g.Id("kernels").Index(jen.Len(jen.Id("entries"))).Op("*").Qual(RuntimePath, "Kernel")
		g.Id("stream").Op("*").Qual(RuntimePath, "Stream")
		g.Id("graphs").Map(jen.Int()).Op("*").Qual(RuntimePath, "GraphExec")
	})

	f.Comment("buffers lists the Layer's buffers.")
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("buffers").Params().Index().Op("*").Qual(RuntimePath, "Buffer").Block(
		jen.Return(jen.Index().Op("*").Qual(RuntimePath, "Buffer").ValuesFunc(func(g *jen.Group) {
			for _, b := range l.bufs {
				g.Op("&").Id("l").Dot(b.Field)
			}
			g.Op("&").Id("l").Dot("Arena")
		})),
	)
}
