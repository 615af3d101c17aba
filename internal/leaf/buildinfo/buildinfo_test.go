package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, c := range []struct {
		name, main, want string
	}{
		{"release", "v1.2.3", "v1.2.3"},
		{"pseudo-version", "v0.0.0-20261205033000-698483fabcde+dirty", "v0.0.0-20261205033000-698483fabcde+dirty"},
		{"none stamped", "(devel)", "(devel)"},
		{"nothing recorded", "", "(devel)"},
	} {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "agentc.dev/agentc", Version: c.main}}
		if got := version(bi); got != c.want {
			t.Errorf("%s: version = %q, want %q", c.name, got, c.want)
		}
	}
	// A version given at link time comes first.
	stamped = "v9.9.9"
	defer func() { stamped = "" }()
	if got := Version(); got != "v9.9.9" {
		t.Errorf("with a version given at link time: %q", got)
	}
}

func TestText(t *testing.T) {
	got := Text("agentc", [2]string{"plans", "agentc.plan/v4"}, [2]string{"journals", "agentc.journal/v2"})
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "agentc ") || !strings.HasPrefix(lines[1], "go: go") ||
		lines[2] != "plans: agentc.plan/v4" || lines[3] != "journals: agentc.journal/v2" {
		t.Fatalf("Text =\n%s", got)
	}
}
