// Package layout_test guards the direction data flows in agentc:
// manifest → compile → plan → runtime. A host that executes plans must not
// link the compiler or CUE.
package layout_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "agentc.dev/agentc"

// allowed lists, for each top-level package, the agentc packages it may
// import. A package not listed here may import nothing of ours.
var allowed = map[string][]string{
	"cmd":       {"*"},
	"internal":  {"*"}, // the command line's packages; which program links what, internal/dispatch tests
	"manifest":  {},
	"compile":   {"manifest", "digest", "plan", "inclusion"},
	"digest":    {},
	"inclusion": {},
	"plan":      {"digest"},
	"runtime":   {"runtime", "plan", "digest", "inclusion"},
}

// forbidden lists imports outside agentc a package must not have.
var forbidden = map[string][]string{
	"runtime":   {"cuelang.org/go", "github.com/spf13/cobra"},
	"plan":      {"cuelang.org/go", "github.com/spf13/cobra"},
	"digest":    {"cuelang.org/go", "github.com/spf13/cobra"},
	"inclusion": {"cuelang.org/go", "github.com/spf13/cobra"},
	"manifest":  {"github.com/spf13/cobra"},
	"compile":   {"github.com/spf13/cobra"},
}

func TestImportDirection(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		top := strings.Split(filepath.ToSlash(path), "/")[0]
		if top == path {
			return nil // this file
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden[top] {
				if p == bad || strings.HasPrefix(p, bad+"/") {
					t.Errorf("%s imports %s; package %s must not", path, p, top)
				}
			}
			rest, ours := strings.CutPrefix(p, module+"/")
			if !ours {
				continue
			}
			target := strings.Split(rest, "/")[0]
			if target == top && top != "runtime" {
				continue
			}
			ok := false
			for _, a := range allowed[top] {
				if a == "*" || a == target {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s imports %s; package %s may import only %v", path, p, top, allowed[top])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no Go files checked")
	}
}
