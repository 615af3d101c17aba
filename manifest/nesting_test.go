package manifest

import (
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
)

// TestTooDeep holds the chains CUE's parser reads in a loop, and that
// overflowed the stack of the resolver that ends its parse, to MaxNesting,
// the bound exactly accepted and one more refused, while wide manifests
// (long lists, many fields, many interpolations) are not counted deep.
func TestTooDeep(t *testing.T) {
	head := "name: \"a\"\nmodel: {provider: \"test\", name: \"m\"}\ninstructions: \"x\"\n"
	chain := func(first, each string, n int, last string) string {
		return head + "x: " + first + strings.Repeat(each, n) + last + "\n"
	}
	for _, c := range []struct {
		name string
		src  string
		deep bool
	}{
		// "x" and ":" count 2; each "a:" 2 more, and the value 1.
		{"labels at the bound", chain("", "a: ", (MaxNesting-3)/2, "1"), false},
		{"labels past the bound", chain("", "a: ", (MaxNesting-3)/2+1, "1"), true},
		// "x", ":" and the first operand; each "+1" 2 more.
		{"operators at the bound", chain("1", "+1", (MaxNesting-3)/2, ""), false},
		{"operators past the bound", chain("1", "+1", (MaxNesting-3)/2+1, ""), true},
		{"selectors past the bound", head + "x: y" + strings.Repeat(".a", MaxNesting) + "\ny: {}\n", true},
		{"disjunction past the bound", chain("1", "|1", MaxNesting/2, ""), true},
		{"brackets past the bound", chain(strings.Repeat("[", MaxNesting), "", 0, strings.Repeat("]", MaxNesting)), true},
		{"long list", chain("[", "1, ", 100_000, "]"), false},
		{"many fields", head + strings.Repeat("_a: 1\n", 100_000), false},
		{"fields in a struct", chain("{", "a: 1, ", 100_000, "}"), false},
		{"many interpolations", chain(`"`, `\(1+1) `, 100_000, `"`), false},
		{"interpolation inside the chain", chain(`"\(1)" `, "+ \"\\(a.b)\" ", MaxNesting/2, ""), true},
		{"not CUE", "\x00\"\\(", false},
		{"unbalanced", ")))]]}", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := tooDeep("m.cue", []byte(c.src))
			if (e != nil) != c.deep {
				t.Fatalf("tooDeep = %v, want deep %v", e, c.deep)
			}
			if e != nil && (!e.Pos.IsValid() || e.Pos.Line() != 4 || e.Code != CodeSyntax) {
				t.Errorf("error at %v (%s), want line 4, %s", e.Pos, e.Code, CodeSyntax)
			}
		})
	}
}

// FuzzNesting checks that what nestingDepth lets through under a limit
// parses into a syntax tree at most about twice as deep: the count bounds
// the depth the parser and the resolver recurse to, whatever the text.
func FuzzNesting(f *testing.F) {
	for _, s := range []string{"a: b: c: 1", "x: y.a.b.c", "x: 1+2*3-4", `x: "\(a)\(b.c)"`, "x: [[1, 2], {a: b: 1}]",
		"for k, v in x if v {(k): v}", "x: f(a.b)(c)[1][2]", "a: {b: [ for x in y {x} ]}", "#\"a\\#(b)\"#", `x: """` + "\n\t\\(a.b)\n\t" + `"""`} {
		f.Add(s, 4)
	}
	f.Fuzz(func(t *testing.T, src string, limit int) {
		limit = 1 + min(max(limit, 0), 40)
		if len(src) > 4096 {
			return
		}
		if nestingDepth([]byte(src), limit) >= 0 {
			return
		}
		file, err := parser.ParseFile("f.cue", src)
		if err != nil {
			return
		}
		if d := astDepth(file); d > 2*limit+4 {
			t.Fatalf("depth %d under a limit of %d", d, limit)
		}
	})
}

// astDepth is the depth of a syntax tree, the file counting one.
func astDepth(n ast.Node) int {
	depth, deepest := 0, 0
	ast.Walk(n, func(ast.Node) bool {
		depth++
		deepest = max(deepest, depth)
		return true
	}, func(ast.Node) { depth-- })
	return deepest
}
