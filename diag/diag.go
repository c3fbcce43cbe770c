// Package diag holds positioned diagnostics: the errors fuser reports about a
// spec, each with a file:line:col position, the source line with a caret under
// the column, and an optional hint.
package diag

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a position in a spec file. Line and Col are 1-based; a zero Pos
// means "no position".
type Pos struct {
	File   string
	Offset int
	Line   int
	Col    int
}

// String formats the position as file:line:col.
func (p Pos) String() string {
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// IsValid reports whether the position points into a file.
func (p Pos) IsValid() bool { return p.Line > 0 }

// Error is one diagnostic.
type Error struct {
	Pos  Pos
	Msg  string
	Hint string
}

// Error formats the diagnostic as file:line:col: message.
func (e *Error) Error() string {
	if !e.Pos.IsValid() {
		return e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// List is a set of diagnostics of one file. It implements error.
type List []*Error

// Add appends a diagnostic.
func (l *List) Add(pos Pos, hint, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// Sort orders the list by position and drops exact duplicates.
func (l *List) Sort() {
	sort.SliceStable(*l, func(i, j int) bool {
		a, b := (*l)[i].Pos, (*l)[j].Pos
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	out := (*l)[:0]
	for i, e := range *l {
		if i > 0 && *e == *(*l)[i-1] {
			continue
		}
		out = append(out, e)
	}
	*l = out
}

// Err returns the list as an error, or nil when it is empty.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Error joins the diagnostics one per line.
func (l List) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Render formats every diagnostic with its source line, a caret under the
// column and the hint, as a terminal user should see it.
func (l List) Render(src string) string {
	lines := strings.Split(src, "\n")
	var b strings.Builder
	for _, e := range l {
		b.WriteString(e.Error())
		b.WriteByte('\n')
		if e.Pos.IsValid() && e.Pos.Line <= len(lines) {
			line := strings.TrimRight(lines[e.Pos.Line-1], "\r")
			b.WriteString("    " + expandTabs(line) + "\n")
			col := min(max(e.Pos.Col, 1), len(line)+1)
			b.WriteString("    " + strings.Repeat(" ", len(expandTabs(line[:col-1]))) + "^\n")
		}
		if e.Hint != "" {
			b.WriteString("    hint: " + e.Hint + "\n")
		}
	}
	return b.String()
}

func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "    ") }
