package cuda

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// emitEpilogue writes the epilogue of one cluster of segment si: the
// cluster's base column is the C variable c0, its values (one per offset)
// vals, its row the output coordinates row (batch axes then m). nv, when
// not empty, is the number of existing columns (a ragged N): values
// anchored past it are stored as 0.
func (ep *epilogue) emitEpilogue(w *writer, si int, row []ix, c0 string, vals []string, nv string) error {
	k := ep.g.k
	seg := &ep.segs[si]
	sample := ep.sampleBases(seg)
	for _, st := range ep.stores {
		anchor := st.x
		if st.anchor != nil {
			anchor = st.anchor
		}
		for _, off := range seg.offs {
			c := ixAdd(ixv(c0), ixc(off))
			oIdx := append(append([]ix(nil), row...), c)
			idx, cs, err := ep.inverse(anchor, oIdx)
			if err != nil {
				return err
			}
			// Column checks are decided for the whole segment.
			var runtime []string
			valid, decided := 0, 0
			for _, cc := range cs {
				if _, ok := cc.x.eval(map[string]int64{c0: 0}); !ok || seg.symN {
					runtime = append(runtime, fmt.Sprintf("%s >= 0 && %s < %s", cc.x, cc.x, ixp(cc.n)))
				}
			}
			for _, b := range sample {
				env := map[string]int64{c0: b}
				decided++
				if anchoredAt(cs, env) {
					valid++
				}
			}
			if !seg.symN {
				if valid == 0 {
					continue
				}
				if valid != decided {
					return fmt.Errorf("epilogue store of %s is anchored at only part of a column segment", st.x.Ref())
				}
			}
			var body writer
			e := &evaluator{k: k, cur: newScope(&body, nil)}
			e.leaf = func(e *evaluator, v *ir.Value, vi []ix) (string, bool, error) {
				if v != ep.g.o {
					return "", false, nil
				}
				cq := vi[len(vi)-1]
				if seg.symN {
					if cq.s != c.s {
						return "", false, fmt.Errorf("epilogue reads another column of a symbolic N")
					}
					return vals[0], true, nil
				}
				delta := int64(-1 << 62)
				for _, b := range sample {
					x, ok := cq.eval(map[string]int64{c0: b})
					if !ok {
						return "", false, fmt.Errorf("epilogue column is not a function of the column")
					}
					if delta == -1<<62 {
						delta = x - b
					} else if x-b != delta {
						return "", false, fmt.Errorf("epilogue columns do not line up in a segment")
					}
				}
				for q2, o2 := range seg.offs {
					if o2 == delta {
						return vals[q2], true, nil
					}
				}
				return "", false, fmt.Errorf("epilogue reads a column outside its cluster")
			}
			x, err := e.eval(st.x, idx)
			if err != nil {
				return err
			}
			if nv != "" {
				x = fmt.Sprintf("(%s < %s ? %s : 0.f)", c, nv, x)
			}
			if st.dst != nil {
				a, err := k.addr(st.dst, idx)
				if err != nil {
					return err
				}
				body.line("fz_st_%s(%s, %s);", dsuf(st.dst.Type.DType), a, x)
			} else {
				ptr, d, err := k.newTokenRow(&body, st.app, st.c, idx)
				if err != nil {
					return err
				}
				body.line("fz_st_%s(%s + %s, %s);", dsuf(st.app.Args[0].Type.DType), ptr, d, x)
			}
			if len(runtime) > 0 {
				w.open("if (%s) {", strings.Join(runtime, " && "))
			} else {
				w.open("{")
			}
			w.raw(strings.TrimRight(body.String(), "\n"))
			w.close()
		}
	}
	return nil
}

// sampleBases returns the base columns of a segment (all of them, or an
// evenly spread sample of long segments) for the column analysis.
func (ep *epilogue) sampleBases(s *segment) []int64 {
	if s.symN {
		return nil
	}
	n := s.bases()
	var out []int64
	step := max(int64(1), n/4096)
	for b := int64(0); b < n; b += step {
		out = append(out, s.start+(b/s.runLen)*s.runStride+b%s.runLen)
	}
	last := n - 1
	out = append(out, s.start+(last/s.runLen)*s.runStride+last%s.runLen)
	return out
}

// emitSegmentFuncs writes one device function per segment running the
// epilogue of a cluster: row r of unit ub, base column c0, the cluster's
// values ev[q], nv existing columns; it records each body's size
// (segment.codeBytes).
func (g *gemmModel) emitSegmentFuncs(w *writer) error {
	ep := g.epi
	for si := range ep.segs {
		w.open("FZ_DEV void @BODY@_epi%d(%s, const i64 ub, const i64 r, const i64 c0, const float* ev, const i64 nv) {", si, g.k.signature(false))
		start := w.b.Len()
		row := g.coords(w, "oc", ixv("ub"), ixv("r"))
		var vals []string
		for q := range ep.segs[si].offs {
			vals = append(vals, fmt.Sprintf("ev[%d]", q))
		}
		nv := ""
		if g.nRagged {
			nv = "nv"
		}
		if err := ep.emitEpilogue(w, si, row, "c0", vals, nv); err != nil {
			return err
		}
		ep.segs[si].codeBytes = w.b.Len() - start
		w.close()
	}
	return nil
}
