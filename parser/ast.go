// Package parser turns spec text into an AST. The grammar is the set of
// annotated structs in this file (participle/v2); every node records the
// position of its first token.
package parser

import "github.com/alecthomas/participle/v2/lexer"

// File is a whole spec: the layer header and its statements.
type File struct {
	Pos   lexer.Position
	Name  string  `parser:"'layer' @Ident"`
	Stmts []*Stmt `parser:"@@*"`
}

// Body is a run of statements without the header; the parser uses it to go
// on reading after a syntax error so that every error of a file is reported.
type Body struct {
	Stmts []*Stmt `parser:"@@*"`
}

// Stmt is one declaration or binding.
type Stmt struct {
	Pos     lexer.Position
	Dims    *DimDecl    `parser:"@@"`
	Consts  *ConstDecl  `parser:"| @@"`
	Tensor  *TensorDecl `parser:"| @@"`
	Fn      *FnDecl     `parser:"| @@"`
	Binding *Binding    `parser:"| @@"`
}

// DimDecl declares symbolic dimensions: dim B, S, T.
type DimDecl struct {
	Pos   lexer.Position
	Names []*Name `parser:"'dim' @@ (',' @@)*"`
}

// Name is an identifier with its position.
type Name struct {
	Pos  lexer.Position
	Name string `parser:"@Ident"`
}

// ConstDecl declares named constants: const D = 4096, eps = 1e-5.
type ConstDecl struct {
	Pos   lexer.Position
	Items []*ConstItem `parser:"'const' @@ (',' @@)*"`
}

// ConstItem is one NAME = EXPR of a const declaration.
type ConstItem struct {
	Pos   lexer.Position
	Name  string `parser:"@Ident '='"`
	Value *Expr  `parser:"@@"`
}

// TensorDecl declares an input, param, state or output tensor.
type TensorDecl struct {
	Pos    lexer.Position
	Kind   string  `parser:"@('input' | 'param' | 'state' | 'output')"`
	Name   string  `parser:"@Ident ':'"`
	Type   *Type   `parser:"@@"`
	Layout *Layout `parser:"('@' @@)?"`
}

// Type is a dtype and a shape: bf16[B, S, D].
type Type struct {
	Pos   lexer.Position
	DType string  `parser:"@Ident '['"`
	Shape []*Expr `parser:"(@@ (',' @@)*)? ']'"`
}

// Layout is a storage annotation of a state: paged(page=16, ...).
type Layout struct {
	Pos  lexer.Position
	Name string `parser:"@Ident"`
	Args []*Arg `parser:"('(' (@@ (',' @@)*)? ')')?"`
}

// FnDecl is a user function: fn rmsnorm(x, w) = EXPR.
type FnDecl struct {
	Pos    lexer.Position
	Name   string  `parser:"'fn' @Ident '('"`
	Params []*Name `parser:"(@@ (',' @@)*)? ')' '='"`
	Body   *Expr   `parser:"@@"`
}

// Binding names the value(s) of an expression: a = EXPR, or q, k = split(...).
type Binding struct {
	Pos   lexer.Position
	Names []*Name `parser:"@@ (',' @@)* '='"`
	Value *Expr   `parser:"@@"`
}

// Expr is a sum: Term (("+" | "-") Term)*.
type Expr struct {
	Pos  lexer.Position
	Left *Term    `parser:"@@"`
	Ops  []*AddOp `parser:"@@*"`
}

// AddOp is one "+ Term" or "- Term" of a sum.
type AddOp struct {
	Pos   lexer.Position
	Op    string `parser:"@('+' | '-')"`
	Right *Term  `parser:"@@"`
}

// Term is a product: Unary (("*" | "/" | "@") Unary)*.
type Term struct {
	Pos  lexer.Position
	Left *Unary   `parser:"@@"`
	Ops  []*MulOp `parser:"@@*"`
}

// MulOp is one "* Unary", "/ Unary" or "@ Unary" of a product.
type MulOp struct {
	Pos   lexer.Position
	Op    string `parser:"@('*' | '/' | '@')"`
	Right *Unary `parser:"@@"`
}

// Unary is a negation or a primary expression.
type Unary struct {
	Pos     lexer.Position
	Neg     *Unary   `parser:"'-' @@"`
	Primary *Primary `parser:"| @@"`
}

// Primary is a number, a name, a call, a parenthesised expression or a list.
type Primary struct {
	Pos    lexer.Position
	Number *string `parser:"@(Float | Int)"`
	Call   *Call   `parser:"| @@"`
	Paren  *Expr   `parser:"| '(' @@ ')'"`
	List   *List   `parser:"| @@"`
}

// Call is a name, optionally applied to arguments: x, or f(a, axis=-1).
type Call struct {
	Pos     lexer.Position
	Name    string `parser:"@Ident"`
	HasArgs bool   `parser:"(@'('"`
	Args    []*Arg `parser:"(@@ (',' @@)*)? ')')?"`
}

// List is a bracketed list of expressions: [H*Dh, G*Dh].
type List struct {
	Pos   lexer.Position
	Items []*Expr `parser:"'[' (@@ (',' @@)*)? ']'"`
}

// Arg is a call argument, positional or keyword (name=EXPR).
type Arg struct {
	Pos   lexer.Position
	Name  string `parser:"(@Ident '=')?"`
	Value *Expr  `parser:"@@"`
}
