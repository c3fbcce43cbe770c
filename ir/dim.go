package ir

import (
	"fmt"
	"sort"
	"strings"
)

// Dim is a symbolic tensor extent: a polynomial with integer coefficients
// over the spec's dims (B, S, T, ...). Constants fold in, so a shape written
// (H + 2*G)*Dh is stored as the number 6144, and T + S stays symbolic. The
// zero Dim is the number 0. Dims are values: operations return new ones.
type Dim struct {
	// terms maps a monomial, its dim names sorted and joined by "*" ("" for
	// the constant term), to its non-zero coefficient.
	terms map[string]int64
}

// Const returns the constant dim n.
func Const(n int64) Dim {
	if n == 0 {
		return Dim{}
	}
	return Dim{terms: map[string]int64{"": n}}
}

// DimOfTerms returns the dim whose monomials (dim names sorted and joined
// by "*", "" for the constant) have the given coefficients.
func DimOfTerms(terms map[string]int64) Dim {
	out := make(map[string]int64, len(terms))
	for m, c := range terms {
		out[m] += c
	}
	return normal(out)
}

// Terms returns a copy of d's monomials and their coefficients (see
// DimOfTerms).
func (d Dim) Terms() map[string]int64 {
	out := make(map[string]int64, len(d.terms))
	for m, c := range d.terms {
		out[m] = c
	}
	return out
}

// Sym returns the dim named name.
func Sym(name string) Dim { return Dim{terms: map[string]int64{name: 1}} }

// Add returns d + e.
func (d Dim) Add(e Dim) Dim { return d.combine(e, 1) }

// Sub returns d - e.
func (d Dim) Sub(e Dim) Dim { return d.combine(e, -1) }

func (d Dim) combine(e Dim, sign int64) Dim {
	out := map[string]int64{}
	for m, c := range d.terms {
		out[m] += c
	}
	for m, c := range e.terms {
		out[m] += sign * c
	}
	return normal(out)
}

// Mul returns d * e.
func (d Dim) Mul(e Dim) Dim {
	out := map[string]int64{}
	for m1, c1 := range d.terms {
		for m2, c2 := range e.terms {
			out[monomial(m1, m2)] += c1 * c2
		}
	}
	return normal(out)
}

// DivExact returns d / e when e is a non-zero constant dividing every
// coefficient of d, or a symbolic dim equal to d.
func (d Dim) DivExact(e Dim) (Dim, bool) {
	if d.Equal(e) && !e.IsZero() {
		return Const(1), true
	}
	n, ok := e.Value()
	if !ok || n == 0 {
		return Dim{}, false
	}
	out := map[string]int64{}
	for m, c := range d.terms {
		if c%n != 0 {
			return Dim{}, false
		}
		out[m] = c / n
	}
	return normal(out), true
}

// Value returns the number d is when it has no symbols.
func (d Dim) Value() (int64, bool) {
	for m := range d.terms {
		if m != "" {
			return 0, false
		}
	}
	return d.terms[""], true
}

// IsZero reports whether d is the number 0.
func (d Dim) IsZero() bool { return len(d.terms) == 0 }

// Equal reports whether d and e are the same polynomial.
func (d Dim) Equal(e Dim) bool {
	if len(d.terms) != len(e.terms) {
		return false
	}
	for m, c := range d.terms {
		if e.terms[m] != c {
			return false
		}
	}
	return true
}

// Symbols returns the dim names d uses, sorted.
func (d Dim) Symbols() []string {
	set := map[string]bool{}
	for m := range d.terms {
		for _, s := range strings.Split(m, "*") {
			if s != "" {
				set[s] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Eval returns the number d is for the bound dims.
func (d Dim) Eval(dims map[string]int64) (int64, error) {
	var total int64
	for m, c := range d.terms {
		v := c
		for _, s := range strings.Split(m, "*") {
			if s == "" {
				continue
			}
			x, ok := dims[s]
			if !ok {
				return 0, fmt.Errorf("dim %s is not bound", s)
			}
			v *= x
		}
		total += v
	}
	return total, nil
}

// String prints d with its monomials in a fixed order: "T + S", "6144", "2*B*S".
func (d Dim) String() string {
	if len(d.terms) == 0 {
		return "0"
	}
	keys := make([]string, 0, len(d.terms))
	for m := range d.terms {
		keys = append(keys, m)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if (a == "") != (b == "") {
			return b == "" // constant term last
		}
		return a < b
	})
	var b strings.Builder
	for i, m := range keys {
		c := d.terms[m]
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
		switch {
		case m == "":
			fmt.Fprintf(&b, "%d", c)
		case c == 1:
			b.WriteString(m)
		default:
			fmt.Fprintf(&b, "%d*%s", c, m)
		}
	}
	return b.String()
}

func normal(terms map[string]int64) Dim {
	for m, c := range terms {
		if c == 0 {
			delete(terms, m)
		}
	}
	if len(terms) == 0 {
		return Dim{}
	}
	return Dim{terms: terms}
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

// Shape is the list of a tensor's extents, outermost first.
type Shape []Dim

// String prints the shape as [B, S, 4096].
func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Equal reports whether two shapes have the same rank and equal dims.
func (s Shape) Equal(t Shape) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if !s[i].Equal(t[i]) {
			return false
		}
	}
	return true
}

// NumElements is the product of the extents.
func (s Shape) NumElements() Dim {
	n := Const(1)
	for _, d := range s {
		n = n.Mul(d)
	}
	return n
}

// Eval returns the extents for the bound dims.
func (s Shape) Eval(dims map[string]int64) ([]int, error) {
	out := make([]int, len(s))
	for i, d := range s {
		v, err := d.Eval(dims)
		if err != nil {
			return nil, err
		}
		if v < 0 {
			return nil, fmt.Errorf("extent %s is %d for these dims", d, v)
		}
		out[i] = int(v)
	}
	return out, nil
}
