package cuda

import (
	"fmt"
	"regexp"

	"github.com/fuser-dev/fuser/ir"
)

// reduceKernel generates a Reduce kernel: a reduction over an axis other
// than the last. The grid's threads stride over chunks of 8 positions along
// the last axis of the result; each chunk loops over the reduced axis with
// 8-wide vector loads when its rows are contiguous and aligned. Sum, mean
// and max keep one accumulator per lane; softmax makes two passes (max and
// sum of exponentials, then the normalised values).
func (k *kgen) reduceKernel() (string, error) {
	if len(k.pk.Nodes) != 1 {
		return "", fmt.Errorf("reduce kernel %s has %d ops", k.pk.Name, len(k.pk.Nodes))
	}
	red := k.pk.Nodes[0]
	x, out := red.Args[0], red.Outs[0]
	if err := checkDType(out); err != nil {
		return "", err
	}
	ax := red.Attr.Axis
	xs, os := shapeOf(x), shapeOf(out)
	r := len(os) - 1
	if ax == r {
		return "", fmt.Errorf("reduce kernel %s reduces the last axis", k.pk.Name)
	}
	// The chunk's rows run over the output's leading axes; for softmax the
	// reduced axis is looped over, so it is left out of the rows.
	dom := append([]poly(nil), os[:r]...)
	dom[ax] = pconst(1)
	last := ixp(os[r])
	var w writer
	w.indent = 1
	rowIdx := k.openChunkLoop(&w, dom, last)
	at := func(rr, jj ix) []ix {
		idx := append(append([]ix(nil), rowIdx...), jj)
		idx[ax] = rr
		return idx
	}
	n := ixp(xs[ax])
	if rg := x.Ragged; rg != nil && rg.Axis == ax {
		vl, err := k.validLen(x, at(ixc(0), ixc(0)))
		if err != nil {
			return "", err
		}
		w.line("const i64 rlen = fz_min64(%s, %s);", vl, n)
		n = ixv("rlen")
	}
	outAt := func(rr, jj ix) []ix {
		if red.Op == ir.OpSoftmax {
			return at(rr, jj)
		}
		return at(ixc(0), jj)
	}
	for _, vector := range []bool{true, false} {
		arr := func(name string) string { return name + "[u]" }
		pass := func(body func(e *evaluator, s *sink) error) (*lanes, error) {
			return k.genLanes(nil, vector, nil, nil, body, nil)
		}
		var code writer
		code.indent = w.indent + 1
		loopLanes := func(l *lanes) {
			if vector {
				l.emitVector(&code)
				return
			}
			code.line("#pragma unroll 1")
			code.open("for (int u = 0; u < 8; u++) {")
			code.line("const i64 jj = j0 + u;")
			code.line("if (jj >= %s) break;", last)
			code.raw(l.body)
			code.close()
		}
		var conds []string
		switch red.Op {
		case ir.OpSum, ir.OpMean, ir.OpReduceMax:
			init := "0.f"
			if red.Op == ir.OpReduceMax {
				init = "-FZ_INF"
			}
			code.line("float acc[8];")
			code.line("#pragma unroll")
			code.line("for (int u = 0; u < 8; u++) acc[u] = %s;", init)
			l, err := pass(func(e *evaluator, s *sink) error {
				xv, err := e.eval(x, at(ixv("rr"), ixv("jj")))
				if err != nil {
					return err
				}
				if red.Op == ir.OpReduceMax {
					e.cur.w.line("%s = fmaxf(%s, %s);", arr("acc"), arr("acc"), xv)
				} else {
					e.cur.w.line("%s += %s;", arr("acc"), xv)
				}
				return nil
			})
			if err != nil {
				return "", err
			}
			conds = append(conds, atRR(l.aligned(true), "0"), atRR(l.aligned(true), "1"))
			code.open("for (i64 rr = 0; rr < %s; rr++) {", n)
			loopLanes(l)
			code.close()
			fin := "acc[u]"
			if red.Op == ir.OpMean {
				fin = fmt.Sprintf("(%s > 0 ? acc[u] / (float)%s : 0.f)", n, n)
			}
			st, err := pass(func(e *evaluator, s *sink) error {
				return s.store(out, outAt(ixc(0), ixv("jj")), fin)
			})
			if err != nil {
				return "", err
			}
			conds = append(conds, st.aligned(false))
			loopLanes(st)
		case ir.OpSoftmax:
			code.line("float m[8], s[8];")
			code.line("#pragma unroll")
			code.line("for (int u = 0; u < 8; u++) { m[u] = -FZ_INF; s[u] = 0.f; }")
			l, err := pass(func(e *evaluator, s *sink) error {
				xv, err := e.eval(x, at(ixv("rr"), ixv("jj")))
				if err != nil {
					return err
				}
				e.cur.w.line("fz_ms_add(m[u], s[u], %s);", xv)
				return nil
			})
			if err != nil {
				return "", err
			}
			conds = append(conds, atRR(l.aligned(true), "0"), atRR(l.aligned(true), "1"))
			code.open("for (i64 rr = 0; rr < %s; rr++) {", n)
			loopLanes(l)
			code.close()
			st, err := pass(func(e *evaluator, s *sink) error {
				xv, err := e.eval(x, at(ixv("rr"), ixv("jj")))
				if err != nil {
					return err
				}
				return s.store(out, outAt(ixv("rr"), ixv("jj")), fmt.Sprintf("(m[u] == -FZ_INF || s[u] == 0.f ? 0.f : fz_exp(%s - m[u]) / s[u])", xv))
			})
			if err != nil {
				return "", err
			}
			conds = append(conds, atRR(st.aligned(true), "0"), atRR(st.aligned(true), "1"))
			code.open("for (i64 rr = 0; rr < %s; rr++) {", n)
			loopLanes(st)
			code.close()
		default:
			return "", fmt.Errorf("reduce kernel %s: %s over a non-last axis is not supported", k.pk.Name, red.Op)
		}
		if vector {
			w.open("if (j0 + 8 <= %s && %s) {", last, joinConds(conds))
		} else {
			w.close("} else {")
			w.indent++
		}
		w.raw(code.String())
	}
	w.close()
	w.close()
	return w.String(), nil
}

var rrWord = regexp.MustCompile(`\brr\b`)

// atRR substitutes the reduced-axis loop variable: alignment at positions 0
// and 1 of a strided axis is alignment at every position.
func atRR(cond, at string) string { return rrWord.ReplaceAllString(cond, at) }

func joinConds(cs []string) string {
	out := ""
	for _, c := range cs {
		if c == "true" {
			continue
		}
		if out != "" {
			out += " && "
		}
		out += c
	}
	if out == "" {
		return "true"
	}
	return out
}
