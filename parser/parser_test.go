package parser_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/diag"
	"github.com/fuser-dev/fuser/internal/golden"
	"github.com/fuser-dev/fuser/parser"
	"github.com/fuser-dev/fuser/specs"
)

// TestParseSpecs dumps the AST of every shipped spec against its golden file.
func TestParseSpecs(t *testing.T) {
	for _, name := range specs.Names() {
		t.Run(name, func(t *testing.T) {
			file, src, _ := specs.Source(name)
			f, err := parser.Parse(file, src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			golden.Check(t, filepath.Join("testdata", name+".ast"), parser.Dump(f))
		})
	}
}

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // errors, file:line:col: message
	}{
		{"missing header", "dim B\n", []string{"t.fu:1:1: syntax error: a spec must start with `layer NAME`"}},
		{"unclosed shape", "layer a\ninput x : bf16[B, 4\ninput y : bf16[B]\n",
			[]string{`t.fu:2:20: syntax error: unexpected end of line (expected "]")`}},
		{"two errors", "layer a\nx = (1 + \ny = 2\nz = ) \n",
			[]string{
				`t.fu:3:3: syntax error: unexpected token "=" (expected ")")`,
				`t.fu:4:5: syntax error: unexpected token ")" (expected expression)`,
			}},
		{"bad character", "layer a\nx = y;\n", []string{`t.fu:2:6: syntax error: unexpected character ";"`}},
		{"bad exponent", "layer a\nconst e = 1e\n", []string{`t.fu:2:11: syntax error: unexpected token "1e" (expected expression)`}},
		{"keyword as name", "layer a\nfn dim(x) = x\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parser.Parse("t.fu", tt.src)
			var got []string
			if err != nil {
				for _, e := range err.(diag.List) {
					got = append(got, e.Error())
				}
			}
			if tt.want == nil {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
