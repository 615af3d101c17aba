package compile_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"agentc.dev/agentc/compile"
)

// TestRulesDocumented keeps docs/vet.md in step with compile.Rules: a row
// per code, with its severity and whether it can be silenced.
func TestRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/vet.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range compile.Rules {
		silence := "yes"
		if r.Refusal != "" {
			silence = "no"
		}
		row := "| `" + r.Code + "` | " + r.Severity.String() + " | " + silence + " |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/vet.md has no row %q", row)
		}
	}
}

// TestRulesTable checks the table itself: each code once, in the form
// codes take, with a summary; and only an error may guard a refusal (a
// warning or a note, which never fails vet, guards nothing).
func TestRulesTable(t *testing.T) {
	codeForm := regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)
	seen := map[string]bool{}
	for _, r := range compile.Rules {
		if seen[r.Code] {
			t.Errorf("code %s is listed twice in compile.Rules", r.Code)
		}
		seen[r.Code] = true
		if !codeForm.MatchString(r.Code) {
			t.Errorf("code %q is not upper-case words joined by _", r.Code)
		}
		if r.Summary == "" {
			t.Errorf("%s has no summary", r.Code)
		}
		if !slices.Contains([]compile.Severity{compile.Error, compile.Warning, compile.Note}, r.Severity) {
			t.Errorf("%s has severity %v", r.Code, r.Severity)
		}
		if r.Refusal != "" && r.Severity != compile.Error {
			t.Errorf("%s is a %v that cannot be silenced; only an error guards a refusal", r.Code, r.Severity)
		}
		got, ok := compile.RuleOf(r.Code)
		if !ok || got != r {
			t.Errorf("RuleOf(%s) = %v, %v; want the table's row", r.Code, got, ok)
		}
	}
	if _, ok := compile.RuleOf("NO_SUCH_CODE"); ok {
		t.Error("RuleOf knows a code the table does not list")
	}
}

// TestRulesComplete reads the source of the packages that report findings
// (compile, manifest): every code constant they declare is in the table,
// so no finding goes out with a severity the table does not give it, and
// every code in the table is used by a check, so the table lists no rule
// that never fires.
func TestRulesComplete(t *testing.T) {
	declared := map[string]string{} // constant name -> code
	used := map[string]bool{}       // constant names referred to
	for _, dir := range []string{".", "../manifest"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok {
					ast.Inspect(decl, func(n ast.Node) bool { noteUse(n, used); return true })
					continue
				}
				for _, spec := range gd.Specs {
					vs, ok := spec.(*ast.ValueSpec)
					if !ok {
						continue
					}
					if gd.Tok == token.CONST {
						for i, id := range vs.Names {
							if !strings.HasPrefix(id.Name, "Code") || i >= len(vs.Values) {
								continue
							}
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								declared[id.Name], _ = strconv.Unquote(lit.Value)
							}
						}
						continue
					}
					if slices.ContainsFunc(vs.Names, func(id *ast.Ident) bool { return id.Name == "Rules" }) {
						continue // the table names every code; that is no use
					}
					ast.Inspect(vs, func(n ast.Node) bool { noteUse(n, used); return true })
				}
			}
		}
	}
	if len(declared) < 30 {
		t.Fatalf("found %d code constants; the parse missed some", len(declared))
	}
	inTable := map[string]bool{}
	for _, r := range compile.Rules {
		inTable[r.Code] = true
	}
	usedCodes := map[string]bool{}
	for name, code := range declared {
		if !inTable[code] {
			t.Errorf("%s (%s) is not in compile.Rules", name, code)
		}
		if used[name] {
			usedCodes[code] = true
		}
	}
	for _, r := range compile.Rules {
		if !usedCodes[r.Code] {
			t.Errorf("%s is in compile.Rules, but no check reports it", r.Code)
		}
	}
}

// noteUse records a reference to a code constant: CodeX, or manifest.CodeX.
func noteUse(n ast.Node, used map[string]bool) {
	switch n := n.(type) {
	case *ast.Ident:
		if strings.HasPrefix(n.Name, "Code") {
			used[n.Name] = true
		}
	case *ast.SelectorExpr:
		if strings.HasPrefix(n.Sel.Name, "Code") {
			used[n.Sel.Name] = true
		}
	}
}
