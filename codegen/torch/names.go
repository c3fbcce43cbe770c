package torch

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// pyKeywords are Python's reserved words and the names the exported layer
// function itself binds; a dim spelled like one gets another name.
var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
	"match": true, "case": true, "type": true,
	// the layer function's parameters and the modules it uses
	"t": true, "dims": true, "mode": true, "torch": true, "argparse": true, "sys": true,
}

// reservedPrefix matches the names of generated values (v12, v12_kv) and
// helpers (_rope), which a dim must not take.
var reservedPrefix = regexp.MustCompile(`^(v[0-9]|_)`)

// dimNames maps each dim of g to the Python name the program binds it to:
// its own name unless that is reserved, else dim_NAME (made unique).
func dimNames(g *ir.Graph) map[string]string {
	taken := map[string]bool{}
	for _, d := range g.Dims {
		taken[d] = true
	}
	out := map[string]string{}
	for _, d := range g.Dims {
		name := d
		if pyKeywords[d] || reservedPrefix.MatchString(d) {
			name = "dim_" + d
			for taken[name] {
				name += "_"
			}
			taken[name] = true
		}
		out[d] = name
	}
	return out
}

// ident matches the dim names in a printed Dim.
var ident = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// pyDim renders d as a Python integer expression over the dims' names.
func pyDim(d ir.Dim, names map[string]string) string {
	return ident.ReplaceAllStringFunc(d.String(), func(s string) string {
		if n, ok := names[s]; ok {
			return n
		}
		return s
	})
}

// pyShape renders a shape as a Python list.
func pyShape(s ir.Shape, names map[string]string) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = pyDim(d, names)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pyFloat renders a finite float64 as a Python float literal that reads
// back as the same number.
func pyFloat(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// varName is the Python variable of a value: v<ID>, with its spec name
// when it has one (v20_h).
func varName(v *ir.Value) string {
	if v.Name != "" {
		return fmt.Sprintf("v%d_%s", v.ID, v.Name)
	}
	return fmt.Sprintf("v%d", v.ID)
}

// pyInts renders a list of ints as a Python list.
func pyInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
