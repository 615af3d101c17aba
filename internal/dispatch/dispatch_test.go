package dispatch

import (
	"errors"
	"io/fs"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"agentc.dev/agentc/internal/cli"
)

func TestRoute(t *testing.T) {
	files := map[string]string{
		"plan.json":      `{"agent": {"name": "a"}, "format": "agentc.plan/v2"}`,
		"PLAN.JSON":      `{"format": "agentc.plan/v2"}`,
		"manifest.json":  `{"name": "a", "model": {"provider": "openai", "name": "m"}}`,
		"plan.cue":       `format: "agentc.plan/v2"`,
		"-":              `{"format": "agentc.plan/v2"}`,
		"--report.json":  `{"format": "agentc.plan/v2"}`,
		"input.json":     `{"format": "agentc.plan/v2"}`,
		"dir/plan.json":  `{"format": "agentc.plan/v2"}`,
		"record":         `{"format": "agentc.plan/v2"}`,
		"unreadable.txt": ``,
	}
	read := func(name string) ([]byte, error) {
		s, ok := files[name]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return []byte(s), nil
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "plan.json"}, runtimeProgram},
		{[]string{"run", "PLAN.JSON"}, runtimeProgram},
		{[]string{"run", "dir/plan.json", "--model", "test"}, runtimeProgram},
		{[]string{"run", "--input", "@input.json", "plan.json"}, runtimeProgram},
		{[]string{"run", "--input", "-", "plan.json"}, runtimeProgram},
		{[]string{"run", "--input={}", "--report", "plan.json", "--deadline", "3s"}, runtimeProgram},
		{[]string{"run", "--report=false", "plan.json"}, runtimeProgram},
		{[]string{"run", "--record", "j.jsonl", "--seed", "4", "plan.json"}, runtimeProgram},
		{[]string{"run", "--", "plan.json"}, runtimeProgram},
		{[]string{"run", "--replay", "record", "plan.json", "--base-url", "http://x", "--dir", "d", "--events", "e", "--tool-budget", "1", "--token-budget", "9"}, runtimeProgram},

		// Everything else goes to the compiler program.
		{nil, compilerProgram},
		{[]string{"--help"}, compilerProgram},
		{[]string{"vet", "plan.json"}, compilerProgram},
		{[]string{"compile", "plan.json"}, compilerProgram},
		{[]string{"help", "run"}, compilerProgram},
		{[]string{"run"}, compilerProgram},                              // "."
		{[]string{"run", "manifest.json"}, compilerProgram},             // JSON, not a plan
		{[]string{"run", "plan.cue"}, compilerProgram},                  // not JSON
		{[]string{"run", "-"}, compilerProgram},                         // standard input
		{[]string{"run", "missing.json"}, compilerProgram},              // the compiler says what is wrong
		{[]string{"run", "plan.json", "--help"}, compilerProgram},       // help
		{[]string{"run", "-h", "plan.json"}, compilerProgram},           // help
		{[]string{"run", "plan.json", "--nope"}, compilerProgram},       // unknown flag
		{[]string{"run", "plan.json", "--input"}, compilerProgram},      // missing value
		{[]string{"run", "plan.json", "plan.json"}, compilerProgram},    // two paths
		{[]string{"run", "--input", "plan.json"}, compilerProgram},      // the plan is the input: no path
		{[]string{"run", "--record", "plan.json"}, compilerProgram},     // likewise
		{[]string{"run", "--", "plan.json", "x"}, compilerProgram},      // two paths
		{[]string{"run", "--report", "--report.json"}, compilerProgram}, // an unknown flag, not a path
		{[]string{"vet", "run", "plan.json"}, compilerProgram},          // run is not the verb
	}
	for _, tt := range tests {
		if got := Route(tt.args, read); got != tt.want {
			t.Errorf("Route(%q) = %s, want %s", tt.args, got, tt.want)
		}
	}
}

// TestRunFlags: the flags the router reads are the run verb's, each with
// or without a value as the verb takes it. A flag added to run and not
// here would make the router take its value for the path.
func TestRunFlags(t *testing.T) {
	cmd := cli.NewRunCmd()
	var values, bools []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() == "bool" {
			bools = append(bools, f.Name)
		} else {
			values = append(values, f.Name)
		}
		if f.Shorthand != "" {
			t.Errorf("run's flag --%s has a shorthand -%s, which the router does not read", f.Name, f.Shorthand)
		}
	})
	check := func(kind string, got []string, want map[string]bool) {
		var w []string
		for name := range want {
			w = append(w, name)
		}
		sort.Strings(got)
		sort.Strings(w)
		if strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("run's flags with %s: the verb has %q, the router reads %q", kind, got, w)
		}
	}
	check("a value", values, runValueFlags)
	check("no value", bools, runBoolFlags)
}

// TestFindFallback: without the runtime program, a plan runs in the
// compiler program; without the compiler program, nothing stands in.
func TestFindFallback(t *testing.T) {
	installed := map[string]bool{}
	lookup := func(name string) (string, error) {
		if installed[name] {
			return "/bin/" + name, nil
		}
		return "", errors.New(name + " is not installed")
	}
	installed[compilerProgram] = true
	if got, err := find(runtimeProgram, lookup); err != nil || got != "/bin/"+compilerProgram {
		t.Errorf("runtime missing: %q, %v", got, err)
	}
	installed[runtimeProgram] = true
	if got, err := find(runtimeProgram, lookup); err != nil || got != "/bin/"+runtimeProgram {
		t.Errorf("both installed: %q, %v", got, err)
	}
	delete(installed, compilerProgram)
	if _, err := find(compilerProgram, lookup); err == nil || !strings.Contains(err.Error(), "agentc-compiler is not installed") {
		t.Errorf("compiler missing: %v", err)
	}
}

// TestProgramDeps: the agentc command imports only the standard library
// and its own small packages, so it starts at once; the runtime program
// links neither CUE nor the compiler, nor cobra or text/template.
func TestProgramDeps(t *testing.T) {
	deps := func(pkg string, std bool) []string {
		format := "{{if not .Standard}}{{.ImportPath}}{{end}}"
		if std {
			format = "{{.ImportPath}}"
		}
		out, err := exec.Command("go", "list", "-deps", "-f", format, pkg).CombinedOutput()
		var ee *exec.Error
		if errors.As(err, &ee) {
			t.Skipf("no go command to list dependencies with: %v", err)
		}
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		return strings.Fields(string(out))
	}
	got := deps("agentc.dev/agentc/cmd/agentc", false)
	want := []string{"agentc.dev/agentc/internal/launch", "agentc.dev/agentc/internal/dispatch", "agentc.dev/agentc/cmd/agentc"}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the agentc command depends on %q; want only %q and the standard library", got, want)
	}
	rt := deps("agentc.dev/agentc/cmd/agentc-runtime", true)
	if len(rt) < 10 {
		t.Fatalf("go list found too little for the runtime program: %q", rt)
	}
	for _, d := range rt {
		// text/template can call methods by name, so a program that
		// links it keeps every exported method of every type.
		if d == "text/template" || d == "html/template" {
			t.Errorf("the runtime program depends on %s", d)
		}
		for _, bad := range []string{"cuelang.org/go", "agentc.dev/agentc/manifest", "agentc.dev/agentc/compile", "agentc.dev/agentc/internal/cli", "github.com/spf13/cobra"} {
			if d == bad || strings.HasPrefix(d, bad+"/") {
				t.Errorf("the runtime program depends on %s", d)
			}
		}
	}
}
