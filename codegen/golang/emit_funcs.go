package golang

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/fuser-dev/fuser/codegen"
)

// errorf is fmt.Errorf("<layer>: <format>", args...).
func (l *layer) errorf(format string, args ...jen.Code) *jen.Statement {
	return jen.Qual("fmt", "Errorf").Call(append([]jen.Code{jen.Lit(l.name + ": " + format)}, args...)...)
}

// emitNew emits New and load.
func (l *layer) emitNew(f *jen.File) {
	rt := func(name string) *jen.Statement { return jen.Qual(RuntimePath, name) }
	f.Comment("New loads the kernels and allocates the buffers on ctx; Forward tells")
	f.Comment("the kernels dims, which must lie within Planned.")
	f.Func().Id("New").Params(jen.Id("ctx").Op("*").Add(rt("Context")), jen.Id("dims").Id("Dims")).Params(jen.Op("*").Id("Layer"), jen.Error()).Block(
		jen.If(jen.Err().Op(":=").Id("dims").Dot("check").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.Id("l").Op(":=").Op("&").Id("Layer").ValuesFunc(func(g *jen.Group) {
			g.Id("dims").Op(":").Id("dims")
			g.Id("graphs").Op(":").Map(jen.Int()).Op("*").Add(rt("GraphExec")).Values()
			if len(l.loadOnly) > 0 {
				g.Id("ctx").Op(":").Id("ctx")
			}
		}),
		jen.If(jen.Err().Op(":=").Id("l").Dot("load").Call(jen.Id("ctx")), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Nil(), jen.Qual("errors", "Join").Call(l.errorf("%w", jen.Err()), jen.Id("l").Dot("Close").Call())),
		),
		jen.Return(jen.Id("l"), jen.Nil()),
	)

	f.Comment("load loads the module and the kernels, allocates the buffers and makes")
	f.Comment("the capture stream.")
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("load").Params(jen.Id("ctx").Op("*").Add(rt("Context"))).Error().BlockFunc(func(g *jen.Group) {
		g.Var().Err().Error()
		g.If(jen.List(jen.Id("l").Dot("module"), jen.Err()).Op("=").Id("ctx").Dot("LoadModule").Call(jen.Id("ptx")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
		g.For(jen.List(jen.Id("i"), jen.Id("name")).Op(":=").Range().Id("entries")).Block(
			jen.If(jen.List(jen.Id("l").Dot("kernels").Index(jen.Id("i")), jen.Err()).Op("=").Id("l").Dot("module").Dot("Kernel").Call(jen.Id("name")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		)
		alloc := func(field, what string, bytes jen.Code) {
			g.If(jen.List(jen.Id("l").Dot(field), jen.Err()).Op("=").Id("ctx").Dot("Alloc").Call(bytes), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(what+": %w"), jen.Err())),
			)
		}
		for _, b := range l.bufs {
			alloc(fieldName(b.Field), b.Role+" "+b.Value.Name, jen.Lit(int(b.Bytes+b.Extra)))
		}
		alloc(fieldName("Arena"), "arena", jen.Id("ArenaBytes"))
		g.List(jen.Id("l").Dot("stream"), jen.Err()).Op("=").Id("ctx").Dot("NewStream").Call()
		g.Return(jen.Err())
	})
}

// emitForward emits Forward and forward, one runtime.Launch per entry.
func (l *layer) emitForward(f *jen.File) {
	f.Comment("Forward enqueues one step of the layer on stream: every kernel, in plan")
	if l.hasLoad() {
		f.Comment("order, with the dims given to New, but the load stage's (Fold).")
	} else {
		f.Comment("order, with the dims given to New.")
	}
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("Forward").Params(jen.Id("stream").Op("*").Qual(RuntimePath, "Stream")).Error().Block(
		jen.Return(jen.Id("l").Dot("forward").Call(jen.Id("stream"), jen.Id("l").Dot("dims"))),
	)

	f.Comment("forward launches the kernels on s with dims d.")
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("forward").Params(jen.Id("s").Op("*").Qual(RuntimePath, "Stream"), jen.Id("d").Id("Dims")).Error().BlockFunc(func(g *jen.Group) {
		for i, la := range l.launches {
			if !la.Kernel.Load {
				l.emitLaunch(g, i, la)
			}
		}
		g.Return(jen.Nil())
	})
}

// emitFold emits Fold, which launches the load stage, when the plan has one.
func (l *layer) emitFold(f *jen.File) {
	if !l.hasLoad() {
		return
	}
	f.Comment("Fold runs the load stage: the kernels that compute values of the params")
	f.Comment("alone (a norm weight's 1 + w, sibling weights joined) into buffers of")
	f.Comment("their own, which every step reads. LoadSafetensors and InitRandom call")
	f.Comment("it; call it again after writing a param through its accessor. It")
	f.Comment("returns once the stage has run.")
	if len(l.loadOnly) > 0 {
		f.Comment("After it, ReleaseParams frees the params only the stage reads.")
	}
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("Fold").Params().Error().BlockFunc(func(g *jen.Group) {
		g.List(jen.Id("s"), jen.Id("d")).Op(":=").List(jen.Id("l").Dot("stream"), jen.Id("l").Dot("dims"))
		for i, la := range l.launches {
			if la.Kernel.Load {
				l.emitLaunch(g, i, la)
			}
		}
		g.Return(jen.Id("l").Dot("stream").Dot("Synchronize").Call())
	})
	l.emitRelease(f)
}

// emitRelease emits ReleaseParams and allocParams when some params are
// read by the load stage alone.
func (l *layer) emitRelease(f *jen.File) {
	if len(l.loadOnly) == 0 {
		return
	}
	var names []string
	for _, b := range l.loadOnly {
		names = append(names, b.Value.Name)
	}
	f.Comment(fmt.Sprintf("ReleaseParams frees the params only the load stage reads (%s):", strings.Join(names, ", ")))
	f.Comment("after Fold a step reads their folded values alone, and keeping both holds")
	f.Comment("those weights in device memory twice. Their accessors then return an")
	f.Comment("empty Buffer until LoadSafetensors or InitRandom allocates them again.")
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("ReleaseParams").Params().Error().Block(
		jen.Return(jen.Qual("errors", "Join").CallFunc(func(g *jen.Group) {
			for _, b := range l.loadOnly {
				g.Id("l").Dot(fieldName(b.Field)).Dot("Free").Call()
			}
		})),
	)
	f.Comment("allocParams allocates again the params ReleaseParams freed.")
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("allocParams").Params().Error().BlockFunc(func(g *jen.Group) {
		g.Var().Err().Error()
		for _, b := range l.loadOnly {
			field := fieldName(b.Field)
			g.If(jen.Id("l").Dot(field).Dot("Ptr").Op("==").Lit(0)).Block(
				jen.If(jen.List(jen.Id("l").Dot(field), jen.Err()).Op("=").Id("l").Dot("ctx").Dot("Alloc").Call(jen.Lit(int(b.Bytes+b.Extra))), jen.Err().Op("!=").Nil()).Block(
					jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("param "+b.Value.Name+": %w"), jen.Err())),
				),
			)
		}
		g.Return(jen.Nil())
	})
}

// emitLaunch emits launch i, la, on stream s with dims d.
func (l *layer) emitLaunch(g *jen.Group, i int, la launch) {
	lp := la.Kernel.Launch
	dep := ""
	if lp.Dependent {
		dep = ", dependent"
	}
	if lp.Cluster > 1 {
		dep += fmt.Sprintf(", clusters of %d", lp.Cluster)
	}
	g.Comment(fmt.Sprintf("%s: %s grid(%d,%d,%d), block %d%s", la.Entry, lp.Variant, lp.Grid[0], lp.Grid[1], lp.Grid[2], la.Block, dep))
	call := []jen.Code{
		jen.Id("l").Dot("kernels").Index(jen.Lit(i)),
		jen.Index(jen.Lit(3)).Int64().Values(jen.Lit(int(lp.Grid[0])), jen.Lit(int(lp.Grid[1])), jen.Lit(int(lp.Grid[2]))),
		jen.Lit(la.Block),
		jen.Lit(int(lp.SharedBytes)),
		jen.Id("s"),
	}
	for j, a := range la.Args {
		if a.Map == nil {
			call = append(call, l.argCode(a))
			continue
		}
		// A tensor map, encoded from its buffers' addresses at each launch
		// (so also as a captured graph records it).
		m := fmt.Sprintf("tmap%d_%d", i, j)
		g.List(jen.Id(m), jen.Err()).Op(":=").Qual(RuntimePath, "RowMap").Call(l.argCode(a.Map.K), l.argCode(a.Map.V),
			jen.Lit(int64(codegen.RowMapRows)), jen.Lit(int(a.Map.Dh)))
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(l.errorf("%w", jen.Err())))
		call = append(call, jen.Id(m))
	}
	fn := "Launch"
	switch {
	case lp.Cluster > 1:
		// A cluster launch: its attributes go in runtime.LaunchOpts, after
		// the shared memory.
		fn = "LaunchWith"
		opts := []jen.Code{jen.Id("Cluster").Op(":").Lit(int(lp.Cluster))}
		if lp.Dependent {
			opts = append([]jen.Code{jen.Id("Dependent").Op(":").True()}, opts...)
		}
		call = append(call[:4], append([]jen.Code{jen.Qual(RuntimePath, "LaunchOpts").Values(opts...)}, call[4:]...)...)
	case lp.Dependent:
		fn = "LaunchDependent"
	}
	g.If(jen.Err().Op(":=").Qual(RuntimePath, fn).Call(call...), jen.Err().Op("!=").Nil()).Block(
		jen.Return(l.errorf("%w", jen.Err())),
	)
}

// argCode is the Go expression of one kernel argument.
func (l *layer) argCode(a arg) jen.Code {
	switch {
	case a.Dim != "":
		return jen.Id("d").Dot(a.Dim)
	case a.Field != "":
		return jen.Id("l").Dot(fieldName(a.Field)).Dot("Ptr")
	}
	return jen.Id("l").Dot(fieldName("Arena")).Dot("At").Call(jen.Lit(int(a.Offset)))
}

// emitCapture emits Capture: Forward with the batch dim B set to batch,
// captured once per batch into a CUDA graph.
func (l *layer) emitCapture(f *jen.File) {
	batch := l.dimField("B")
	f.Comment("Capture captures Forward for a batch of batch sequences (dim B = batch,")
	f.Comment("the other dims as given to New) into a CUDA graph, once per batch size;")
	f.Comment("launch the graph to replay the step. The Layer owns the graph.")
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("Capture").Params(jen.Id("batch").Int()).Params(jen.Op("*").Qual(RuntimePath, "GraphExec"), jen.Error()).BlockFunc(func(g *jen.Group) {
		g.If(jen.List(jen.Id("e"), jen.Id("ok")).Op(":=").Id("l").Dot("graphs").Index(jen.Id("batch")), jen.Id("ok")).Block(jen.Return(jen.Id("e"), jen.Nil()))
		g.Id("d").Op(":=").Id("l").Dot("dims")
		if batch != "" {
			g.Id("d").Dot(batch).Op("=").Int64().Call(jen.Id("batch"))
			g.If(jen.Err().Op(":=").Id("d").Dot("check").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err()))
		} else {
			g.If(jen.Id("batch").Op("!=").Lit(1)).Block(jen.Return(jen.Nil(), l.errorf("no batch dim B: batch %d", jen.Id("batch"))))
		}
		g.List(jen.Id("e"), jen.Err()).Op(":=").Qual(RuntimePath, "Capture").Call(jen.Id("l").Dot("stream"), jen.Func().Params().Error().Block(
			jen.Return(jen.Id("l").Dot("forward").Call(jen.Id("l").Dot("stream"), jen.Id("d"))),
		))
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), l.errorf("capture batch %d: %w", jen.Id("batch"), jen.Err())))
		g.Id("l").Dot("graphs").Index(jen.Id("batch")).Op("=").Id("e")
		g.Return(jen.Id("e"), jen.Nil())
	})
}

// emitClose emits Close.
func (l *layer) emitClose(f *jen.File) {
	f.Comment("Close releases the graphs (the ladder's too), buffers, stream and module.")
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("Close").Params().Error().Block(
		jen.Var().Id("errs").Index().Error(),
		jen.If(jen.Id("l").Dot("ladder").Op("!=").Nil()).Block(
			jen.Id("errs").Op("=").Append(jen.Id("errs"), jen.Id("l").Dot("ladder").Dot("Destroy").Call()),
			jen.Id("l").Dot("ladder").Op("=").Nil(),
		),
		jen.For(jen.List(jen.Id("_"), jen.Id("e")).Op(":=").Range().Id("l").Dot("graphs")).Block(
			jen.Id("errs").Op("=").Append(jen.Id("errs"), jen.Id("e").Dot("Destroy").Call()),
		),
		jen.For(jen.List(jen.Id("_"), jen.Id("b")).Op(":=").Range().Id("l").Dot("buffers").Call()).Block(
			jen.Id("errs").Op("=").Append(jen.Id("errs"), jen.Id("b").Dot("Free").Call()),
		),
		jen.If(jen.Id("l").Dot("stream").Op("!=").Nil()).Block(
			jen.Id("errs").Op("=").Append(jen.Id("errs"), jen.Id("l").Dot("stream").Dot("Destroy").Call()),
		),
		jen.If(jen.Id("l").Dot("module").Op("!=").Nil()).Block(
			jen.Id("errs").Op("=").Append(jen.Id("errs"), jen.Id("l").Dot("module").Dot("Unload").Call()),
		),
		jen.Return(jen.Qual("errors", "Join").Call(jen.Id("errs").Op("..."))),
	)
}
