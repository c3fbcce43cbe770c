package parser

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/fuser-dev/fuser/diag"
)

// Keywords are the words that start declarations; they cannot name values.
var Keywords = []string{"layer", "dim", "const", "input", "param", "state", "output", "fn"}

var specLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `#[^\n]*`},
	{Name: "Float", Pattern: `(\d+\.\d*|\.\d+)([eE][-+]?\d+)?|\d+[eE][-+]?\d+`},
	{Name: "BadNumber", Pattern: `\d+(\.\d*)?[eE][-+]?`},
	{Name: "Int", Pattern: `\d+`},
	{Name: "Ident", Pattern: `[A-Za-z_][A-Za-z0-9_]*`},
	{Name: "Punct", Pattern: `[-+*/@=,:()\[\]]`},
	{Name: "Whitespace", Pattern: `\s+`},
})

var options = []participle.Option{
	participle.Lexer(specLexer),
	participle.Elide("Comment", "Whitespace"),
	participle.UseLookahead(3),
}

var (
	fileParser = participle.MustBuild[File](options...)
	bodyParser = participle.MustBuild[Body](options...)
)

// stmtStart matches a line that begins a statement: a keyword or a binding.
var stmtStart = regexp.MustCompile(`^\s*((layer|dim|const|input|param|state|output|fn)\b|[A-Za-z_]\w*\s*(,\s*[A-Za-z_]\w*\s*)*=)`)

// Parse parses a spec. On syntax errors it returns a diag.List with every
// syntax error of the file: after each error it resumes at the next line that
// starts a statement.
func Parse(filename, src string) (*File, error) {
	f, err := fileParser.ParseString(filename, src)
	if err == nil {
		var errs diag.List
		checkNames(f, &errs)
		return f, errs.Err()
	}
	var errs diag.List
	lines := strings.SplitAfter(src, "\n")
	first := atLineEnd(syntaxError(filename, err), lines)
	if !headerRE.MatchString(src) {
		first.Msg, first.Hint = "syntax error: a spec must start with `layer NAME`", "add a first line such as: layer llama3_8b"
	}
	errs = append(errs, first)
	// Resume at the next statement after each error; from only grows, so the
	// loop ends.
	from := first.Pos.Line
	for {
		next := nextStmtLine(lines, from)
		if next < 0 {
			break
		}
		_, err := bodyParser.ParseString(filename, mask(lines, next))
		if err == nil {
			break
		}
		e := syntaxError(filename, err)
		if e.Pos.Line <= from {
			break
		}
		from = e.Pos.Line
		if e = atLineEnd(e, lines); e.Pos.Line > errs[len(errs)-1].Pos.Line {
			errs = append(errs, e)
		}
	}
	return nil, errs
}

// badNumber matches a message about a number with an empty exponent.
var badNumber = regexp.MustCompile(`unexpected token "\d+(\.\d*)?[eE][-+]?"`)

// headerRE matches a spec whose first token is "layer".
var headerRE = regexp.MustCompile(`^(\s|#[^\n]*\n)*layer\b`)

// nextStmtLine returns the 0-based index of the first line after line
// (1-based) that starts a statement, or -1.
func nextStmtLine(lines []string, line int) int {
	for i := line; i < len(lines); i++ {
		if stmtStart.MatchString(lines[i]) {
			return i
		}
	}
	return -1
}

// mask blanks every line before index from (keeping newlines) so that
// positions in the rest of the text stay those of the whole file.
func mask(lines []string, from int) string {
	var b strings.Builder
	for i, l := range lines {
		if i < from {
			b.WriteString(strings.Repeat(" ", len(strings.TrimRight(l, "\n"))))
			if strings.HasSuffix(l, "\n") {
				b.WriteByte('\n')
			}
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// atLineEnd moves an error found at the first token of a line to the end of
// the previous line with code, where the statement was left unfinished: a
// missing "]" is reported after the last token, not at the next statement.
func atLineEnd(e *diag.Error, lines []string) *diag.Error {
	p := e.Pos
	if p.Line < 2 || p.Line > len(lines) {
		return e
	}
	line := lines[p.Line-1]
	if p.Col != len(line)-len(strings.TrimLeft(line, " \t"))+1 || !strings.HasPrefix(e.Msg, "syntax error: unexpected token") {
		return e
	}
	for l := p.Line - 1; l >= 1; l-- {
		code := strings.TrimRight(strings.SplitN(strings.TrimRight(lines[l-1], "\r\n"), "#", 2)[0], " \t")
		if code == "" {
			continue
		}
		msg := "syntax error: unexpected end of line"
		if i := strings.Index(e.Msg, " (expected"); i >= 0 {
			msg += e.Msg[i:]
		}
		return &diag.Error{Pos: diag.Pos{File: p.File, Line: l, Col: len(code) + 1}, Msg: msg, Hint: e.Hint}
	}
	return e
}

// syntaxError converts a participle error into a positioned diagnostic.
func syntaxError(filename string, err error) *diag.Error {
	var perr participle.Error
	if errors.As(err, &perr) {
		p := perr.Position()
		msg := grammarWords.Replace(perr.Message())
		if m := lexerError.FindStringSubmatch(perr.Message()); m != nil {
			msg = fmt.Sprintf("unexpected character %q", m[1])
		}
		return &diag.Error{Pos: Position(p), Msg: "syntax error: " + msg, Hint: syntaxHint(msg)}
	}
	return &diag.Error{Pos: diag.Pos{File: filename, Line: 1, Col: 1}, Msg: fmt.Sprintf("syntax error: %v", err)}
}

// grammarWords renames grammar symbols in participle's messages to words.
var grammarWords = strings.NewReplacer(
	"Expr", "expression",
	"Term", "expression",
	"Unary", "expression",
	"Primary", "expression",
	"Stmt", "declaration or binding",
	"Type", "type such as bf16[B, D]",
)

// lexerError matches participle's message for a character no token starts with.
var lexerError = regexp.MustCompile(`^lexer: invalid input text "(.).*`)

func syntaxHint(msg string) string {
	switch {
	case strings.Contains(msg, `expected "layer"`):
		return "a spec starts with `layer NAME`"
	case badNumber.MatchString(msg):
		return "an exponent needs digits, as in 1e-5"
	case strings.Contains(msg, "unexpected character"):
		return "allowed characters are names, numbers, + - * / @ = , : ( ) [ ] and # comments"
	}
	return ""
}

// Position converts a lexer position to a diagnostic position.
func Position(p lexer.Position) diag.Pos {
	return diag.Pos{File: p.Filename, Offset: p.Offset, Line: p.Line, Col: p.Column}
}

// checkNames reports keywords used as names of bindings, parameters or declarations.
func checkNames(f *File, errs *diag.List) {
	isKeyword := func(s string) bool {
		for _, k := range Keywords {
			if s == k {
				return true
			}
		}
		return false
	}
	report := func(pos lexer.Position, name string) {
		if isKeyword(name) {
			errs.Add(Position(pos), "choose another name", "%q is a keyword and cannot name a value", name)
		}
	}
	for _, s := range f.Stmts {
		switch {
		case s.Binding != nil:
			for _, n := range s.Binding.Names {
				report(n.Pos, n.Name)
			}
		case s.Tensor != nil:
			report(s.Tensor.Pos, s.Tensor.Name)
		case s.Fn != nil:
			report(s.Fn.Pos, s.Fn.Name)
			for _, p := range s.Fn.Params {
				report(p.Pos, p.Name)
			}
		case s.Consts != nil:
			for _, c := range s.Consts.Items {
				report(c.Pos, c.Name)
			}
		case s.Dims != nil:
			for _, d := range s.Dims.Names {
				report(d.Pos, d.Name)
			}
		}
	}
}
