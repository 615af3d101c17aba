package manifest

import (
	"fmt"
	"path/filepath"
	"strings"

	"cuelang.org/go/cue/scanner"
	"cuelang.org/go/cue/token"
)

// MaxNesting bounds how deep one CUE file's syntax may nest, counted as
// nestingDepth counts it. CUE's parser refuses brackets nested past
// 10,000, but not a chain of labels (a: a: a: …), of selectors
// (x.a.a.a…) or of operators (1+1+1…): the parser reads those in a loop
// and builds a tree as deep as the chain, which the reference resolver
// that ends every parse then walks recursively, and a 2 MB file of them
// overflowed the goroutine's stack, a crash of the whole process that no
// time or memory bound can catch. The bound is the parser's own.
const MaxNesting = 10_000

// tooDeep reports a CUE file whose syntax nests past MaxNesting,
// positioned where it does; nil for any other, one that does not scan
// included (the parser says what is wrong with it). It reads tokens
// only, in a loop, so no input can make it recurse.
func tooDeep(name string, data []byte) *Error {
	off := nestingDepth(data, MaxNesting)
	if off < 0 {
		return nil
	}
	f := token.NewFile(name, -1, len(data))
	f.SetLinesForContent(data)
	return &Error{Code: CodeSyntax, Pos: f.Pos(off, token.NoRelPos),
		Msg: fmt.Sprintf("the expression or the fields here nest more than %d deep (each bracket, label, selector and operator of one value counts): agentc refuses this before CUE reads it; write it more simply", MaxNesting)}
}

// checkCUE is tooDeep for the files CUE's loader reads
// (userfile.FS.Check): a .cue file, by its host path.
func checkCUE(path string, data []byte) error {
	if filepath.Ext(path) != ".cue" {
		return nil
	}
	if e := tooDeep(path, data); e != nil {
		return e
	}
	return nil
}

// nestingDepth returns the offset at which data's syntax first nests past
// limit, or -1. What it counts bounds the depth of the syntax tree
// CUE's parser builds: within one element (between commas, or the
// brackets around it), every token but a comma deepens the element by
// one (a label and its colon, a selector, an operator and its operand),
// and a bracket starts its elements one deeper than the element it
// stands in, which goes on after it closes as deep as it was.
func nestingDepth(data []byte, limit int) int {
	var s scanner.Scanner
	f := token.NewFile("", -1, len(data))
	s.Init(f, data, func(token.Pos, string, []any) {}, 0)
	type level struct {
		start  int  // the depth of its elements' first token
		before int  // the depth of the element the bracket stands in
		interp bool // a string interpolation's \( … )
	}
	var levels []level
	depth, start := 0, 0
	interpNext := false
	for {
		pos, tok, lit := s.Scan()
		switch tok {
		case token.EOF:
			return -1
		case token.COMMA:
			depth = start
			continue
		case token.LPAREN, token.LBRACK, token.LBRACE:
			l := level{start: start, before: depth + 1}
			if interpNext && tok == token.LPAREN {
				// The string's pieces and expressions are its elements,
				// side by side.
				l.before, l.interp = depth, true
			}
			levels = append(levels, l)
			interpNext = false
			depth++
			start = depth
		case token.RPAREN, token.RBRACK, token.RBRACE:
			if len(levels) == 0 {
				return -1 // the parser says what is wrong
			}
			l := levels[len(levels)-1]
			levels = levels[:len(levels)-1]
			depth, start = l.before, l.start
			if l.interp && tok == token.RPAREN {
				interpNext = strings.HasSuffix(s.ResumeInterpolation(), "(")
			}
		case token.INTERPOLATION:
			interpNext = strings.HasSuffix(lit, "(")
			depth++
		default:
			depth++
		}
		if depth > limit {
			return pos.Offset()
		}
	}
}
