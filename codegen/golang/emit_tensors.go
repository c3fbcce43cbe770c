package golang

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/fuser-dev/fuser/ir"
)

// safetensorsDTypes are the safetensors names of the dtypes a layer holds.
var safetensorsDTypes = map[ir.DType]string{
	ir.BF16: "BF16", ir.F16: "F16", ir.F32: "F32", ir.I32: "I32", ir.FP8E4M3: "F8_E4M3",
}

// tensor is a param or state as a safetensors file holds it.
type tensor struct {
	buf   buffer
	dtype string
	shape []int64
}

// tensors lists the params, then the states, with their storage shapes.
func (l *layer) tensors(g *ir.Graph, dims map[string]int64) ([]tensor, error) {
	var out []tensor
	for _, role := range []string{"param", "state"} {
		for _, b := range l.bufs {
			if b.Role != role {
				continue
			}
			dt, ok := safetensorsDTypes[b.Value.Type.DType]
			if !ok {
				return nil, fmt.Errorf("%s %s: dtype %s has no safetensors name", role, b.Value.Name, b.Value.Type.DType)
			}
			sh, err := storageShape(g, b.Value, dims)
			if err != nil {
				return nil, err
			}
			out = append(out, tensor{buf: b, dtype: dt, shape: sh})
		}
	}
	return out, nil
}

// emitTensors emits the tensor table, LoadSafetensors and InitRandom.
func (l *layer) emitTensors(f *jen.File) {
	rt := func(name string) *jen.Statement { return jen.Qual(RuntimePath, name) }
	params := 0
	f.Comment("tensors are the params, then the states, as a safetensors file holds")
	f.Comment("them: named as in the spec, with their dtype and their storage shape at")
	f.Comment("the planned dims (a contiguous KV cache [2, B, G, T+S, Dh], a paged one")
	f.Comment("its pool [pages, 2, G, page, Dh]).")
	f.Var().Id("tensors").Op("=").Index(jen.Op("...")).Add(rt("TensorSpec")).ValuesFunc(func(g *jen.Group) {
		for _, t := range l.tensorList {
			if t.buf.Role == "param" {
				params++
			}
			g.Line().Values(
				jen.Id("Name").Op(":").Lit(t.buf.Value.Name),
				jen.Id("DType").Op(":").Lit(t.dtype),
				jen.Id("Shape").Op(":").Index().Int64().ValuesFunc(func(g *jen.Group) {
					for _, d := range t.shape {
						g.Lit(int(d))
					}
				}),
			)
		}
		g.Line()
	})
	f.Comment("nParams is the number of params at the head of tensors.")
	f.Const().Id("nParams").Op("=").Lit(params)

	f.Comment("tensorBuffers are the buffers of tensors, in the same order.")
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("tensorBuffers").Params().Index().Add(rt("Buffer")).Block(
		jen.Return(jen.Index().Add(rt("Buffer")).ValuesFunc(func(g *jen.Group) {
			for _, t := range l.tensorList {
				g.Id("l").Dot(fieldName(t.buf.Field))
			}
		})),
	)

	f.Comment("LoadSafetensors copies every param, and every state the file holds,")
	f.Comment("from the safetensors file at path into the Layer's buffers; each must")
	f.Comment("have the dtype and shape of tensors.")
	l.thenFold(f)
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("LoadSafetensors").Params(jen.Id("path").String()).Error().Block(
		l.realloc(),
		jen.List(jen.Id("st"), jen.Err()).Op(":=").Add(rt("OpenSafetensors")).Call(jen.Id("path")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(l.errorf("%w", jen.Err()))),
		jen.Defer().Id("st").Dot("Close").Call(),
		jen.Id("bufs").Op(":=").Id("l").Dot("tensorBuffers").Call(),
		jen.For(jen.List(jen.Id("i"), jen.Id("t")).Op(":=").Range().Id("tensors")).Block(
			jen.If(jen.Id("i").Op(">=").Id("nParams").Op("&&").Op("!").Id("st").Dot("Has").Call(jen.Id("t").Dot("Name"))).Block(jen.Continue()),
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("st").Dot("Read").Call(jen.Id("t")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(l.errorf("%w", jen.Err()))),
			jen.If(jen.Err().Op(":=").Id("bufs").Index(jen.Id("i")).Dot("CopyIn").Call(jen.Id("b")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(l.errorf("%s: %w", jen.Id("t").Dot("Name"), jen.Err())),
			),
		),
		l.loaded(),
	)

	f.Comment("InitRandom fills every param and state with runtime.RandomTensor's")
	f.Comment("values for seed: the same seed gives the same layer.")
	l.thenFold(f)
	f.Func().Params(jen.Id("l").Op("*").Id("Layer")).Id("InitRandom").Params(jen.Id("seed").Uint64()).Error().Block(
		l.realloc(),
		jen.Id("bufs").Op(":=").Id("l").Dot("tensorBuffers").Call(),
		jen.For(jen.List(jen.Id("i"), jen.Id("t")).Op(":=").Range().Id("tensors")).Block(
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Add(rt("RandomTensor")).Call(jen.Id("t"), jen.Id("seed")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(l.errorf("%w", jen.Err()))),
			jen.If(jen.Err().Op(":=").Id("bufs").Index(jen.Id("i")).Dot("CopyIn").Call(jen.Id("b")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(l.errorf("%s: %w", jen.Id("t").Dot("Name"), jen.Err())),
			),
		),
		l.loaded(),
	)
}

// realloc is how LoadSafetensors and InitRandom begin when ReleaseParams
// may have freed params: by allocating them again (nothing otherwise).
func (l *layer) realloc() jen.Code {
	if len(l.loadOnly) == 0 {
		return jen.Null()
	}
	return jen.If(jen.Err().Op(":=").Id("l").Dot("allocParams").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(l.errorf("%w", jen.Err())))
}

// loaded is how LoadSafetensors and InitRandom return once the tensors are
// in: through the load stage when the plan has one.
func (l *layer) loaded() jen.Code {
	if l.hasLoad() {
		return jen.Return(jen.Id("l").Dot("Fold").Call())
	}
	return jen.Return(jen.Nil())
}

// thenFold ends the doc comments of LoadSafetensors and InitRandom when
// they run the load stage.
func (l *layer) thenFold(f *jen.File) {
	if l.hasLoad() {
		f.Comment("Then it runs the load stage (Fold).")
	}
}
