package golang

import (
	"fmt"
	"sort"

	"github.com/dave/jennifer/jen"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/runtime"
)

// ladderModel is what a layer's graph ladder copies per step, worked out
// from the graph: how each input is copied and padded, and the paged
// cache's table. Why, when set, says why the layer has no ladder.
type ladderModel struct {
	inputs []ladderInput
	pages  *ladderPages
	why    string
}

// ladderInput is one input a step copies.
type ladderInput struct {
	value *ir.Value
	kind  runtime.InputKind
	// row is the elements of one sequence's row (BatchRows).
	row ir.Dim
}

// ladderPages is the paged cache the step pads a page table for.
type ladderPages struct {
	state *ir.Value
	page  int64
	// pages is the pool's page count; newTokens S and maxLen T+S bound
	// each sequence's length after the append.
	pages, newTokens, maxLen ir.Dim
}

// analyzeLadder works out the ladder of g. A step pads the batch: rows of
// inputs whose leading axis is B, and a paged cache's table. A ragged
// cache cannot be padded without moving the real sequences' tokens (its
// buffer's stride is indptr[B], the total of every sequence's tokens), and
// an input with B elsewhere than in front cannot be padded by rows.
func analyzeLadder(g *ir.Graph) *ladderModel {
	m := &ladderModel{}
	hasB := false
	for _, d := range g.Dims {
		hasB = hasB || d == "B"
	}
	if !hasB {
		m.why = "the layer has no batch dim B"
		return m
	}
	role := map[*ir.Value]runtime.InputKind{}
	for _, st := range g.States {
		lay := st.Def.Attr.Layout
		if lay == nil || lay.Kind == ir.Contiguous {
			continue
		}
		if lay.Kind == ir.RaggedLayout {
			m.why = fmt.Sprintf("state %s is ragged: its buffer's stride is the total token count indptr[B], which padding the batch would change", st.Name)
			return m
		}
		if m.pages != nil {
			m.why = fmt.Sprintf("states %s and %s are both paged; a ladder pads one page table", m.pages.state.Name, st.Name)
			return m
		}
		p := &ladderPages{state: st, page: lay.Page, pages: lay.Pages, newTokens: ir.Const(0), maxLen: st.Type.Shape[3]}
		for _, nd := range g.Nodes {
			if nd.Op == ir.OpAppend && nd.Args[0] == st {
				p.newTokens = nd.Args[1].Type.Shape[2] // k: [B, G, S, Dh]
				p.maxLen = nd.Outs[0].Type.Shape[2]    // K: [B, G, T+S, Dh]
			}
		}
		m.pages = p
		role[lay.Indptr], role[lay.Indices], role[lay.Last] = runtime.PageIndptr, runtime.PageIDs, runtime.PageLast
	}
	for _, v := range g.Inputs {
		if k, ok := role[v]; ok {
			m.inputs = append(m.inputs, ladderInput{value: v, kind: k})
			continue
		}
		if p := v.Packed; p != nil {
			m.why = fmt.Sprintf("input %s packs its prompts' tokens by %s: a packed prefill runs without graphs", v.Name, p.Indptr.Name)
			return m
		}
		sh := v.Type.Shape
		ok := len(sh) > 0 && sh[0].Equal(ir.Sym("B"))
		for _, d := range sh[min(1, len(sh)):] {
			for _, s := range d.Symbols() {
				ok = ok && s != "B"
			}
		}
		if !ok {
			m.why = fmt.Sprintf("input %s %s has no leading batch axis B to pad", v.Name, sh)
			return m
		}
		m.inputs = append(m.inputs, ladderInput{value: v, kind: runtime.BatchRows, row: ir.Shape(sh[1:]).NumElements()})
	}
	// Every size the step needs must be a linear function of the dims.
	dims := map[string]bool{}
	for _, d := range g.Dims {
		dims[d] = true
	}
	check := []ir.Dim{}
	for _, in := range m.inputs {
		check = append(check, in.row)
	}
	if m.pages != nil {
		check = append(check, m.pages.pages, m.pages.newTokens, m.pages.maxLen)
	}
	for _, d := range check {
		if _, _, err := linear(d); err != nil {
			m.why = err.Error()
			return m
		}
	}
	return m
}

// linear splits d into its constant and one coefficient per dim, or fails
// for a d that is not linear in the dims.
func linear(d ir.Dim) (int64, map[string]int64, error) {
	syms := d.Symbols()
	at := func(one string) int64 {
		env := map[string]int64{}
		for _, s := range syms {
			env[s] = 0
		}
		if one != "" {
			env[one] = 1
		}
		n, _ := d.Eval(env)
		return n
	}
	c0 := at("")
	coef := map[string]int64{}
	r := ir.Const(c0)
	for _, s := range syms {
		coef[s] = at(s) - c0
		r = r.Add(ir.Sym(s).Mul(ir.Const(coef[s])))
	}
	if !r.Equal(d) {
		return 0, nil, fmt.Errorf("size %s is not linear in the dims", d)
	}
	return c0, coef, nil
}

// dimCode is the Go expression of d over the Dims value named dv.
func (l *layer) dimCode(d ir.Dim, dv string) jen.Code {
	c0, coef, err := linear(d)
	if err != nil {
		panic(err) // analyzeLadder checked every size it hands out
	}
	var terms []jen.Code
	names := make([]string, 0, len(coef))
	for s := range coef {
		names = append(names, s)
	}
	sort.Strings(names)
	for _, s := range names {
		t := jen.Id(dv).Dot(l.dimField(s))
		if c := coef[s]; c != 1 {
			t = jen.Lit(int(c)).Op("*").Add(t)
		}
		terms = append(terms, t)
	}
	if c0 != 0 || len(terms) == 0 {
		terms = append(terms, jen.Lit(int(c0)))
	}
	out := jen.Add(terms[0])
	for _, t := range terms[1:] {
		out = out.Op("+").Add(t)
	}
	return out
}

// LadderInputs describes the graph ladder of g at dims to the runtime, as
// the generated package's Ladder hands it over, for a caller that makes or
// stages a step's inputs itself (gpu/laddercheck's eager references): the
// inputs a step copies, with their storage at dims (the package's buffers
// hold that and the padding's room), and the paged cache's table, whose
// Scratch is the page past the pool (P at dims), as in the package.
func LadderInputs(g *ir.Graph, dims map[string]int64) ([]runtime.StepInput, *runtime.PageTable, error) {
	m := analyzeLadder(g)
	if m.why != "" {
		return nil, nil, fmt.Errorf("layer %s has no graph ladder: %s", g.Name, m.why)
	}
	var out []runtime.StepInput
	for _, in := range m.inputs {
		n, err := storageBytes(g, in.value, dims)
		if err != nil {
			return nil, nil, err
		}
		si := runtime.StepInput{Name: in.value.Name, Kind: in.kind, Bytes: n}
		if in.kind == runtime.BatchRows {
			row, err := in.row.Eval(dims)
			if err != nil {
				return nil, nil, err
			}
			si.RowBytes = row * in.value.Type.DType.Size()
		}
		out = append(out, si)
	}
	if m.pages == nil {
		return out, nil, nil
	}
	var vals [3]int64
	for i, d := range []ir.Dim{m.pages.pages, m.pages.newTokens, m.pages.maxLen} {
		n, err := d.Eval(dims)
		if err != nil {
			return nil, nil, err
		}
		vals[i] = n
	}
	return out, &runtime.PageTable{Page: m.pages.page, Pages: vals[0], Scratch: int32(vals[0]), NewTokens: vals[1], MaxLen: vals[2]}, nil
}
