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

// allowed lists, for each package (and the packages below it, unless one
// of those has an entry of its own), the agentc packages it may import,
// with the packages below them. A package with no entry may import
// nothing of ours but itself.
var allowed = map[string][]string{
	"cmd/agentc":         {"internal/cli", "internal/gcpace"},
	"cmd/agentc-runtime": {"internal/runcmd", "internal/gcpace"},
	"internal/cli":       {"*"},
	"internal/runcmd":    {"internal/leaf/buildinfo", "internal/leaf/project", "internal/leaf/userfile", "internal/leaf/atomicfile", "runtime", "plan", "digest", "inclusion", "cost", "telemetry", "internal/termtext", "serve"},
	"internal/gcpace":    {},
	// The providers agentc carries beyond agentc-runtime's.
	"internal/providers": {"internal/runcmd", "plan", "runtime"},
	"internal/vetcase":   {},
	"manifest":           {"internal/leaf/project", "internal/leaf/userfile", "plan"},
	"compile":            {"internal/leaf/project", "internal/leaf/userfile", "manifest", "digest", "plan", "inclusion", "internal/leaf/jsonpointer", "cost", "constraint"},
	"cost":               {"internal/leaf/userfile", "plan"},
	"digest":             {},
	"contractdiff":       {"plan", "inclusion", "digest", "internal/leaf/jsonpointer", "runtime/testmodel"},
	"inclusion":          {"internal/leaf/jsonpointer", "internal/leaf/pattern", "plan"},
	"plan":               {"internal/leaf/userfile", "digest", "internal/leaf/jsonpointer", "internal/leaf/pattern"},
	"runtime":            {"internal/leaf/bodyrate", "internal/leaf/buildinfo", "internal/leaf/flock", "internal/leaf/userfile", "runtime", "plan", "digest", "inclusion", "internal/leaf/jsonpointer", "internal/leaf/jsonshape", "internal/leaf/textcut", "cost"},
	"temporal":           {"runtime", "plan", "digest", "inclusion", "internal/leaf/jsonpointer", "telemetry"},
	"internal/devserver": {},
	"agenttest":          {"internal/leaf/userfile", "plan", "runtime", "constraint", "internal/leaf/cueproc", "internal/leaf/textcut"},
	"runview":            {"internal/leaf/userfile", "runtime", "plan", "digest", "cost", "internal/termtext"},
	"approval":           {"plan", "runtime", "digest", "constraint", "internal/leaf/cueproc"},
	"telemetry":          {"runtime", "internal/leaf/textcut"},
	"serve":              {"plan", "runtime", "internal/leaf/atomicfile", "internal/leaf/bodyrate", "internal/leaf/userfile", "internal/leaf/diskfree", "internal/leaf/jsonshape", "internal/termtext", "digest"},
	"serve/a2a":          {"runtime", "serve", "plan", "digest", "internal/leaf/atomicfile", "internal/leaf/jsonpointer", "internal/leaf/jsonshape", "internal/leaf/userfile"},
	"telemetry/otlp":     {"runtime", "telemetry", "internal/leaf/textcut"},

	// The leaves: small packages any layer may use, which import nothing
	// of agentc's (TestImportDirection holds them to it).
	"internal/leaf": {},
	// Text from parties agentc does not trust, made safe for a terminal.
	"internal/termtext": {"digest"},
	// CUE constraints a plan keeps as written, compiled (vet, test, run).
	"constraint": {"plan"},
	// Random schemas, changes of them and values near them, for tests.
	"internal/schemagen": {"inclusion", "plan", "runtime/testmodel"},
}

// forbidden lists imports outside agentc a package must not have.
var forbidden = map[string][]string{
	"internal/runcmd": {"cuelang.org/go", "github.com/spf13/cobra", "google.golang.org/genai", "github.com/aws/aws-sdk-go-v2"},
	"runtime":         {"cuelang.org/go", "github.com/spf13/cobra"},
	"plan":            {"cuelang.org/go", "github.com/spf13/cobra"},
	"digest":          {"cuelang.org/go", "github.com/spf13/cobra"},
	"inclusion":       {"cuelang.org/go", "github.com/spf13/cobra"},
	"manifest":        {"github.com/spf13/cobra"},
	"compile":         {"github.com/spf13/cobra"},
	"temporal":        {"cuelang.org/go", "github.com/spf13/cobra"},
	"contractdiff":    {"cuelang.org/go", "github.com/spf13/cobra"},
	"runview":         {"cuelang.org/go", "github.com/spf13/cobra"},
	"serve":           {"cuelang.org/go", "github.com/spf13/cobra"},
	"cost":            {"cuelang.org/go", "github.com/spf13/cobra", "text/template"},
	// The SDK and its exporters are for the agentc program alone: the
	// runtime program links the recorder, which needs only the API.
	"telemetry":      {"cuelang.org/go", "github.com/spf13/cobra", "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters"},
	"telemetry/otlp": {"cuelang.org/go", "github.com/spf13/cobra"},

	"internal/leaf/jsonpointer": {"cuelang.org/go", "github.com/spf13/cobra"},
	"internal/leaf/textcut":     {"cuelang.org/go", "github.com/spf13/cobra"},
	"internal/leaf/jsonshape":   {"cuelang.org/go", "github.com/spf13/cobra"},
	"internal/leaf/cueproc":     {"cuelang.org/go", "github.com/spf13/cobra"},
	"internal/termtext":         {"cuelang.org/go", "github.com/spf13/cobra"},
}

// under tells whether the package path p is pkg or below it.
func under(p, pkg string) bool { return p == pkg || strings.HasPrefix(p, pkg+"/") }

// owner returns the key of rules that governs the package path p: the
// longest that p is, or is below; "" for none.
func owner[V any](rules map[string]V, p string) string {
	best := ""
	for k := range rules {
		if under(p, k) && len(k) > len(best) {
			best = k
		}
	}
	return best
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
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			return nil // this file
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden[owner(forbidden, pkg)] {
				if under(p, bad) {
					t.Errorf("%s imports %s; package %s must not", path, p, pkg)
				}
			}
			target, ours := strings.CutPrefix(p, module+"/")
			if !ours {
				continue
			}
			key := owner(allowed, pkg)
			if key == "" {
				key = pkg
			}
			ok := under(target, key)
			if key == "internal/leaf" {
				ok = under(target, pkg) // a leaf uses no other leaf either
			}
			for _, a := range allowed[key] {
				if a == "*" || under(target, a) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s imports %s; package %s may import only %v", path, p, pkg, allowed[key])
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
