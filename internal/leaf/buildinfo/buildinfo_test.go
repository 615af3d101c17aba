package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	setting := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, c := range []struct {
		name     string
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"release", "v1.2.3", setting("vcs.revision", "698483fabcdef0123456789"), "v1.2.3"},
		{"pseudo-version", "v0.0.0-20261205033000-698483fabcde+dirty", nil, "v0.0.0-20261205033000-698483fabcde+dirty"},
		{"no version, a commit", "(devel)", setting("vcs.revision", "698483fabcdef0123456789", "vcs.modified", "false"), "(devel) 698483fabcde"},
		{"no version, a modified checkout", "", setting("vcs.modified", "true", "vcs.revision", "698483f"), "(devel) 698483f+dirty"},
		{"nothing recorded", "", setting("GOOS", "linux"), "(devel)"},
	} {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "agentc.dev/agentc", Version: c.main}, Settings: c.settings}
		if got := version(bi); got != c.want {
			t.Errorf("%s: version = %q, want %q", c.name, got, c.want)
		}
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
