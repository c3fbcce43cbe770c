package golang

import (
	"go/token"
	"strconv"
	"strings"
	"unicode"
)

// exported turns a spec name (kv_indptr, wqkv, B) into an exported Go
// identifier (KvIndptr, Wqkv, B).
func exported(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "_") {
		if part == "" {
			continue
		}
		r := []rune(part)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	s := b.String()
	if s == "" || !unicode.IsUpper([]rune(s)[0]) {
		s = "V" + s
	}
	return s
}

// namer hands out unique exported identifiers, skipping the reserved ones.
type namer map[string]bool

// newNamer reserves the names the generated package declares itself.
func newNamer(reserved ...string) namer {
	n := namer{}
	for _, r := range reserved {
		n[r] = true
	}
	return n
}

// name returns exported(spec), or it with the value's ID appended when that
// is taken.
func (n namer) name(spec string, id int) string {
	s := exported(spec)
	if n[s] {
		s += strconv.Itoa(id)
	}
	for n[s] {
		s += "_"
	}
	n[s] = true
	return s
}

// checkPackage reports whether pkg can name a Go package.
func checkPackage(pkg string) bool {
	return token.IsIdentifier(pkg) && pkg != "_" && pkg != "main"
}
