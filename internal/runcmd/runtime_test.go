package runcmd_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/cli/cuecmd"
	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/journal"
)

const label = `name: "label"
model: {provider: "test", name: "test"}
instructions: "Label the issue."
input: schema: {type: "object", properties: title: {type: "string"}, required: ["title"]}
output: {description: "The label.", schema: {enum: ["bug", "feature"]}}
budgets: deadline: "60s"
`

func caller(path string) string {
	return `name: "triage"
model: {provider: "test", name: "test"}
instructions: "Triage the issue: have it labelled, then say whether it is fine."
capabilities: tools: label: {kind: "agent", description: "Labels an issue.", path: "` + path + `"}
output: {description: "The verdict.", schema: {type: "object", properties: ok: {type: "boolean"}, required: ["ok"]}}
budgets: deadline: "60s"
`
}

// stdin records whether the run read it.
type stdin struct {
	r    io.Reader
	read bool
}

func (s *stdin) Read(p []byte) (int, error) { s.read = true; return s.r.Read(p) }

// TestRuntimeRunsOnlyPlans: the runtime program (no compiler) runs plans,
// and plans calling agents, which carry them, alone in a directory; a
// manifest fails with exit 1 before the run reads its input or writes
// anything, and agentc runs the same command line.
func TestRuntimeRunsOnlyPlans(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("label.cue", label)
	write("caller-manifest.cue", caller("label.cue"))
	write("caller-plan.cue", caller("label.plan.json"))
	write("agent.json", `{"name": "j", "model": {"provider": "test", "name": "test"}, "instructions": "Say.", "output": {"description": "d", "schema": {"type": "string"}}}`)
	full := cuecmd.Compiler()
	compile := func(src, out string) {
		var stderr bytes.Buffer
		code := cli.Run([]string{"compile", filepath.Join(dir, src), "-o", filepath.Join(dir, out)}, cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Dir: dir}, full)
		if code != 0 {
			t.Fatalf("compile %s: exit %d\n%s", src, code, stderr.String())
		}
	}
	compile("label.cue", "label.plan.json")
	compile("caller-manifest.cue", "calls-manifest.plan.json")
	compile("caller-plan.cue", "calls-plan.plan.json")
	// A plan needs no other file: the callee is in it.
	if err := os.Mkdir(filepath.Join(dir, "alone"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "calls-manifest.plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alone", "plan.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		path string
		want string // the error, if the runtime refuses the run
	}{
		{"label.plan.json", ""},
		{"calls-plan.plan.json", ""},
		{"calls-manifest.plan.json", ""},
		{"alone/plan.json", ""},
		{"label.cue", "label.cue is not a compiled plan; agentc-runtime runs only plans: compile it with agentc compile, or run it with agentc"},
		{"agent.json", "agent.json is not a compiled plan; agentc-runtime runs only plans"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			events := filepath.Join(dir, "events-"+filepath.Base(tt.path))
			args := []string{"run", tt.path, "--model", "test", "--input", "-", "--events", events}
			in := &stdin{r: strings.NewReader(`{"title": "t"}`)}
			var stdout, stderr bytes.Buffer
			t.Chdir(dir)
			code := runcmd.Run(args, runcmd.Env{Stdin: in, Stdout: &stdout, Stderr: &stderr, Dir: dir})
			_, statErr := os.Stat(events)
			if tt.want == "" {
				if code != 0 {
					t.Fatalf("exit %d\n%s", code, stderr.String())
				}
				if stdout.Len() == 0 || statErr != nil {
					t.Errorf("the run left no answer or no events file: %q, %v", stdout.String(), statErr)
				}
				return
			}
			if code != runcmd.ExitFindings || !strings.Contains(stderr.String(), "agentc: "+tt.want) {
				t.Errorf("exit %d, want 1 and %q\n%s", code, tt.want, stderr.String())
			}
			if in.read || stdout.Len() > 0 || statErr == nil {
				t.Errorf("the run began before it failed: input read %v, stdout %q, events file %v", in.read, stdout.String(), statErr)
			}
			// agentc, with the compiler, runs the same command line.
			stdout.Reset()
			stderr.Reset()
			code = cli.Run(args, cli.Env{Stdin: strings.NewReader(`{"title": "t"}`), Stdout: &stdout, Stderr: &stderr, Dir: dir}, full)
			if code != 0 || stdout.Len() == 0 {
				t.Errorf("agentc: exit %d, stdout %q\n%s", code, stdout.String(), stderr.String())
			}
		})
	}
}

// TestRuntimeCommandLine: the runtime program's one verb is run; anything
// else is a usage error (exit 2) that says so, and help lists run's flags.
func TestRuntimeCommandLine(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string // on stderr, or on stdout for help
	}{
		{nil, 2, "agentc: agentc-runtime runs plans: agentc-runtime run plan.json\nRun 'agentc-runtime --help' for usage.\n"},
		{[]string{"vet", "x.cue"}, 2, `agentc: unknown command "vet": agentc-runtime has only run, for compiled plans; agentc has every verb`},
		{[]string{"run", "--nope", "p.json"}, 2, "agentc: unknown flag: --nope\n"},
		{[]string{"run", "p.json", "--input"}, 2, "agentc: flag needs an argument: --input\n"},
		{[]string{"run", "a.json", "b.json"}, 2, "agentc: run takes one plan, not 2 paths\n"},
		{[]string{"run", "p.json", "--record=", "--replay="}, 2, "agentc: --record and --replay exclude each other\n"},
		{[]string{"run", "p.json", "--record", "j", "--events", "j"}, 2, "agentc: --record j is the same file as --events j: writing it would overwrite it\nRun 'agentc-runtime --help' for usage.\n"},
		{[]string{"--help"}, 0, "Usage:\n  agentc-runtime run [flags] plan.json"},
		{[]string{"help"}, 0, "      --require-lock "},
		{[]string{"run", "-h"}, 0, "Exit codes: 0 answered"},
		{[]string{"--version"}, 0, "\nplans: " + plan.Format + "\njournals: " + journal.Format + "\n"},
		{[]string{"-v"}, 0, "agentc-runtime "},
		{[]string{"--help"}, 0, "  agentc-runtime --version\n"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		t.Chdir(dir)
		if err := os.WriteFile("p.json", []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := runcmd.Run(tt.args, runcmd.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir})
		out := stderr.String()
		if tt.code == 0 {
			out = stdout.String()
			if stderr.Len() > 0 {
				t.Errorf("%q: stderr %q", tt.args, stderr.String())
			}
		} else if stdout.Len() > 0 {
			t.Errorf("%q: stdout %q", tt.args, stdout.String())
		}
		if code != tt.code || !strings.Contains(out, tt.want) {
			t.Errorf("%q: exit %d, want %d and %q in\n%s", tt.args, code, tt.code, tt.want, out)
		}
	}
}
