package cuda

import (
	"fmt"
	"strings"
)

// writer accumulates indented C source.
type writer struct {
	b      strings.Builder
	indent int
}

// line writes one formatted line at the current indentation.
func (w *writer) line(format string, args ...any) {
	s := strings.ReplaceAll(format, "%%", "%")
	if len(args) > 0 {
		s = fmt.Sprintf(format, args...)
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == "" {
			w.b.WriteString("\n")
			continue
		}
		w.b.WriteString(strings.Repeat("  ", w.indent))
		w.b.WriteString(l)
		w.b.WriteString("\n")
	}
}

// open writes a line ending a block opener and indents.
func (w *writer) open(format string, args ...any) {
	w.line(format, args...)
	w.indent++
}

// close dedents and writes a closing line ("}" when empty).
func (w *writer) close(s ...string) {
	w.indent--
	if len(s) == 0 {
		w.raw("}")
		return
	}
	w.raw(s[0])
}

// raw appends pre-formatted text indented to the current level.
func (w *writer) raw(s string) {
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if l == "" {
			w.b.WriteString("\n")
			continue
		}
		w.b.WriteString(strings.Repeat("  ", w.indent))
		w.b.WriteString(l)
		w.b.WriteString("\n")
	}
}

func (w *writer) String() string { return w.b.String() }
