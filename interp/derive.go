package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// DeriveDims returns dims completed with the dims RandomInputs derives, and
// the names of those it derived, in order. For every paged state whose page
// index count N (the length of its indices input) or page pool size P (its
// pages= dim) is a single dim left unbound:
//
//	N = B * ceil((T + S) / page)  the most page indices B sequences use
//	                              after the step: at most T cached tokens
//	                              plus the S appended ones each
//	P = N + B                     every index a distinct page, B pages unused
//
// where B and T are the state's batch and token extents and S is the number
// of tokens appended to it in the step (0 when it is not appended to); the
// page table describes each sequence after the append (see Run). Run needs
// every dim bound: pass it the completed map.
func DeriveDims(g *ir.Graph, dims map[string]int64) (map[string]int64, []string, error) {
	full := make(map[string]int64, len(dims)+2)
	for k, v := range dims {
		full[k] = v
	}
	var derived []string
	for _, v := range g.States {
		l := v.Def.Attr.Layout
		if l == nil || l.Kind != ir.Paged {
			continue
		}
		b, t, s, err := stateExtents(g, v, full)
		if err != nil {
			return nil, nil, fmt.Errorf("state %s: %w", v.Name, err)
		}
		n := b * ((t + s + int(l.Page) - 1) / int(l.Page))
		if name, ok := unboundSym(l.Indices.Type.Shape[0], full); ok {
			full[name] = int64(n)
			derived = append(derived, name)
		}
		if name, ok := unboundSym(l.Pages, full); ok {
			nv, err := l.Indices.Type.Shape[0].Eval(full)
			if err != nil {
				return nil, nil, fmt.Errorf("state %s: page indices %s: %w", v.Name, l.Indices.Name, err)
			}
			full[name] = nv + int64(b)
			derived = append(derived, name)
		}
	}
	return full, derived, nil
}

// stateExtents returns the batch B and token count T of a [2, B, G, T, Dh]
// state and the number S of tokens appended to each sequence in the step
// (for packed tokens the most one sequence may append, all N of them).
func stateExtents(g *ir.Graph, v *ir.Value, dims map[string]int64) (b, t, s int, err error) {
	shape, err := v.Type.Shape.Eval(dims)
	if err != nil {
		return 0, 0, 0, err
	}
	if len(shape) != 5 || shape[0] != 2 {
		return 0, 0, 0, fmt.Errorf("a KV cache is declared [2, B, G, T, Dh], got %s", v.Type.Shape)
	}
	if ap := g.AppendOf(v); ap != nil {
		k, err := ap.Args[1].Type.Shape.Eval(dims)
		if err != nil {
			return 0, 0, 0, err
		}
		s = k[2]
		if ap.Args[1].Packed != nil {
			s = k[1] // packed [G, N, Dh]: a sequence appends at most N
		}
	}
	return shape[1], shape[3], s, nil
}

// unboundSym reports whether d is a single dim name not bound in dims.
func unboundSym(d ir.Dim, dims map[string]int64) (string, bool) {
	syms := d.Symbols()
	if len(syms) != 1 || !d.Equal(ir.Sym(syms[0])) {
		return "", false
	}
	_, bound := dims[syms[0]]
	return syms[0], !bound
}
