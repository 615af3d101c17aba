// Package constraint compiles the CUE constraints a plan keeps as written
// (a test's expect, a tool's approve_if), for the programs that check them
// (agentc vet, agentc test, the approver of agentc run); the runtime, which
// links no CUE, never does.
package constraint

import (
	"maps"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"agentc.dev/agentc/plan"
)

// Compile compiles a constraint in ctx, positioned where its manifest
// wrote it (at: the start of its text), so that what fails in it is
// reported at its place in the manifest.
func Compile(ctx *cue.Context, con *plan.CUEConstraint, at token.Position) (cue.Value, error) {
	file := at.Filename
	if file == "" {
		file = "constraint"
	}
	src := con.CUE
	if at.Line > 0 {
		src = strings.Repeat("\n", at.Line-1) + strings.Repeat(" ", max(at.Column-1, 0)) + src
	}
	expr, err := parser.ParseExpr(file, src)
	if err != nil {
		// Fields without braces, as in expect: urgency: "high".
		f, ferr := parser.ParseFile(file, src)
		if ferr != nil {
			return cue.Value{}, err
		}
		expr = &ast.StructLit{Elts: f.Decls}
	}
	f := &ast.File{Filename: file}
	for _, id := range slices.Sorted(maps.Keys(con.Imports)) {
		p := con.Imports[id]
		var name *ast.Ident
		if id != importName(p) {
			name = ast.NewIdent(id)
		}
		f.Decls = append(f.Decls, &ast.ImportDecl{Specs: []*ast.ImportSpec{ast.NewImport(name, p)}})
	}
	f.Decls = append(f.Decls, &ast.EmbedDecl{Expr: expr})
	v := ctx.BuildFile(f)
	if err := v.Err(); err != nil {
		return cue.Value{}, err
	}
	return v, nil
}

// importName is the name a file uses an import by when it gives none.
func importName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.IndexByte(path, ':'); i >= 0 {
		path = path[i+1:]
	}
	return path
}
