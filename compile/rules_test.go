package compile_test

import (
	"os"
	"strings"
	"testing"

	"agentc.dev/agentc/compile"
)

// TestRulesDocumented keeps docs/vet.md in step with compile.Rules.
func TestRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/vet.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range compile.Rules {
		if seen[r.Code] {
			t.Errorf("code %s is listed twice in compile.Rules", r.Code)
		}
		seen[r.Code] = true
		row := "| `" + r.Code + "` | " + r.Severity.String() + " |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/vet.md has no row %q", row)
		}
	}
}
