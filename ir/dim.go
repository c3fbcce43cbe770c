package ir

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fuser-dev/fuser/internal/intmath"
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

// Add returns d + e; a coefficient past int64 wraps (AddChecked reports it).
func (d Dim) Add(e Dim) Dim { r, _ := d.combine(e, 1); return r }

// Sub returns d - e; a coefficient past int64 wraps (SubChecked reports it).
func (d Dim) Sub(e Dim) Dim { r, _ := d.combine(e, -1); return r }

// Mul returns d * e; a coefficient past int64 wraps (MulChecked reports it).
func (d Dim) Mul(e Dim) Dim { r, _ := d.mul(e); return r }

// ErrOverflow is returned by the checked operations when a coefficient or
// a value leaves int64.
var ErrOverflow = errors.New("overflows int64")

// AddChecked returns d + e, or ErrOverflow.
func (d Dim) AddChecked(e Dim) (Dim, error) { return checked(d.combine(e, 1)) }

// SubChecked returns d - e, or ErrOverflow.
func (d Dim) SubChecked(e Dim) (Dim, error) { return checked(d.combine(e, -1)) }

// MulChecked returns d * e, or ErrOverflow.
func (d Dim) MulChecked(e Dim) (Dim, error) { return checked(d.mul(e)) }

func checked(d Dim, ok bool) (Dim, error) {
	if !ok {
		return Dim{}, ErrOverflow
	}
	return d, nil
}

// combine returns d + sign·e and whether no coefficient overflowed.
func (d Dim) combine(e Dim, sign int64) (Dim, bool) {
	out := map[string]int64{}
	ok := true
	for m, c := range d.terms {
		out[m] = c
	}
	for m, c := range e.terms {
		sc, mok := intmath.Mul(sign, c)
		sum, aok := intmath.Add(out[m], sc)
		ok = ok && mok && aok
		out[m] = sum
	}
	return normal(out), ok
}

// mul returns d * e and whether no coefficient overflowed.
func (d Dim) mul(e Dim) (Dim, bool) {
	out := map[string]int64{}
	ok := true
	for m1, c1 := range d.terms {
		for m2, c2 := range e.terms {
			m := monomial(m1, m2)
			p, mok := intmath.Mul(c1, c2)
			sum, aok := intmath.Add(out[m], p)
			ok = ok && mok && aok
			out[m] = sum
		}
	}
	return normal(out), ok
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

// Eval returns the number d is for the bound dims; a result or a partial
// product past int64 is ErrOverflow.
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
			if v, ok = intmath.Mul(v, x); !ok {
				return 0, fmt.Errorf("%s at %s: %w", d, bindings(dims, d.Symbols()), ErrOverflow)
			}
		}
		var ok bool
		if total, ok = intmath.Add(total, v); !ok {
			return 0, fmt.Errorf("%s at %s: %w", d, bindings(dims, d.Symbols()), ErrOverflow)
		}
	}
	return total, nil
}

// bindings prints the given dims' values as B=2, T=17.
func bindings(dims map[string]int64, names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%d", n, dims[n])
	}
	return strings.Join(parts, ", ")
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
		mag := uint64(c) // |c|, math.MinInt64 included
		if c < 0 {
			mag = -mag
		}
		switch {
		case m == "":
			fmt.Fprintf(&b, "%d", mag)
		case mag == 1:
			b.WriteString(m)
		default:
			fmt.Fprintf(&b, "%d*%s", mag, m)
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
