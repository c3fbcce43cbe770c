package cuda

import (
	"sort"
	"strconv"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// poly is an integer polynomial over the graph's dims, the form index
// arithmetic is done in before it is printed as C. It mirrors ir.Dim (whose
// terms are private) and adds what the generator needs: exact division by a
// monomial, or of a monomial multiple of a sum by that sum, and printing
// with the kernels' dim parameter names.
type poly map[string]int64

// polyOf converts a dim.
func polyOf(d ir.Dim) poly { return poly(d.Terms()) }

func pconst(n int64) poly {
	if n == 0 {
		return poly{}
	}
	return poly{"": n}
}

func (p poly) norm() poly {
	for m, c := range p {
		if c == 0 {
			delete(p, m)
		}
	}
	return p
}

func (p poly) add(q poly) poly {
	out := poly{}
	for m, c := range p {
		out[m] += c
	}
	for m, c := range q {
		out[m] += c
	}
	return out.norm()
}

func (p poly) sub(q poly) poly { return p.add(q.scale(-1)) }

func (p poly) scale(k int64) poly {
	out := poly{}
	for m, c := range p {
		out[m] = c * k
	}
	return out.norm()
}

func (p poly) mul(q poly) poly {
	out := poly{}
	for m1, c1 := range p {
		for m2, c2 := range q {
			out[monomial(m1, m2)] += c1 * c2
		}
	}
	return out.norm()
}

func monomial(a, b string) string {
	var syms []string
	for _, s := range strings.Split(a+"*"+b, "*") {
		if s != "" {
			syms = append(syms, s)
		}
	}
	sort.Strings(syms)
	return strings.Join(syms, "*")
}

// value returns the number p is when it has no symbols.
func (p poly) value() (int64, bool) {
	for m := range p {
		if m != "" {
			return 0, false
		}
	}
	return p[""], true
}

func (p poly) isConst(n int64) bool {
	v, ok := p.value()
	return ok && v == n
}

func (p poly) equal(q poly) bool {
	if len(p) != len(q) {
		return false
	}
	for m, c := range p {
		if q[m] != c {
			return false
		}
	}
	return true
}

// div returns p / q when the division is exact for every binding: q is a
// single monomial (a constant, a dim or a product) dividing every term, or
// q equals p.
func (p poly) div(q poly) (poly, bool) {
	if len(p) == 0 {
		return poly{}, len(q) > 0
	}
	if p.equal(q) {
		return pconst(1), true
	}
	if len(q) != 1 {
		return p.divByMonomialMultiple(q)
	}
	var qm string
	var qc int64
	for m, c := range q {
		qm, qc = m, c
	}
	out := poly{}
	for m, c := range p {
		if c%qc != 0 {
			return nil, false
		}
		rest, ok := removeSyms(m, qm)
		if !ok {
			return nil, false
		}
		out[rest] += c / qc
	}
	return out.norm(), true
}

// divByMonomialMultiple divides p by a sum q where p is q times one
// monomial (4*B + 32 by B + 8): the quotient is some term of p over one
// term of q, checked by multiplying back.
func (p poly) divByMonomialMultiple(q poly) (poly, bool) {
	var qm string
	var qc int64
	for m, c := range q {
		qm, qc = m, c // any term of q: r times it is a term of p
		break
	}
	for m, c := range p {
		if c%qc != 0 {
			continue
		}
		rest, ok := removeSyms(m, qm)
		if !ok {
			continue
		}
		r := poly{rest: c / qc}.norm()
		if r.mul(q).equal(p) {
			return r, true
		}
	}
	return nil, false
}

// removeSyms removes the symbols of monomial b from monomial a.
func removeSyms(a, b string) (string, bool) {
	if b == "" {
		return a, true
	}
	as := strings.Split(a, "*")
	if a == "" {
		as = nil
	}
	for _, s := range strings.Split(b, "*") {
		i := indexOf(as, s)
		if i < 0 {
			return "", false
		}
		as = append(as[:i], as[i+1:]...)
	}
	return strings.Join(as, "*"), true
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

// divisibleBy reports whether every coefficient of p is a multiple of n.
func (p poly) divisibleBy(n int64) bool {
	for _, c := range p {
		if c%n != 0 {
			return false
		}
	}
	return true
}

// eval returns p's value at the bound dims.
func (p poly) eval(dims map[string]int64) (int64, error) {
	return ir.DimOfTerms(p).Eval(dims)
}

// c prints p as a C i64 expression over the dim parameters.
func (p poly) c() string {
	if len(p) == 0 {
		return "0"
	}
	keys := make([]string, 0, len(p))
	for m := range p {
		keys = append(keys, m)
	}
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == "") != (keys[j] == "") {
			return keys[j] == ""
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for i, m := range keys {
		c := p[m]
		switch {
		case i == 0 && c < 0:
			b.WriteString("-")
		case i > 0 && c < 0:
			b.WriteString(" - ")
		case i > 0:
			b.WriteString(" + ")
		}
		if c < 0 {
			c = -c
		}
		var fs []string
		if m == "" || c != 1 {
			fs = append(fs, intLit(c))
		}
		if m != "" {
			for _, s := range strings.Split(m, "*") {
				fs = append(fs, dimParam(s))
			}
		}
		b.WriteString(strings.Join(fs, "*"))
	}
	s := b.String()
	if !strings.ContainsAny(s, " *-") {
		return s
	}
	return "(" + s + ")"
}

// dimParam is the C name of a dim parameter.
func dimParam(name string) string { return "dim_" + name }

// intLit prints an integer literal, with the LL suffix where int would
// overflow.
func intLit(n int64) string {
	if n > 1<<30 || n < -(1<<30) {
		return strconv.FormatInt(n, 10) + "LL"
	}
	return strconv.FormatInt(n, 10)
}
