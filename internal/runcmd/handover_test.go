package runcmd_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/cli/cuecmd"
	"agentc.dev/agentc/internal/runcmd"
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

// TestHandover: the runtime program (no compiler) runs plans, and plans
// calling plans, itself; anything that needs compiling it hands over
// before it reads its input or writes anything.
func TestHandover(t *testing.T) {
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

	tests := []struct {
		path     string
		handover bool
	}{
		{"label.plan.json", false},
		{"calls-plan.plan.json", false},
		{"calls-manifest.plan.json", true},
		{"label.cue", true},
		{"agent.json", true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			args := []string{"run", filepath.Join(dir, tt.path), "--model", "test", "--input", "-", "--events", filepath.Join(dir, "events-"+tt.path)}
			in := &stdin{r: strings.NewReader(`{"title": "t"}`)}
			var stdout, stderr bytes.Buffer
			handedOver := false
			code := runcmd.Run(args, runcmd.Env{Stdin: in, Stdout: &stdout, Stderr: &stderr, Dir: dir}, func() error {
				handedOver = true
				return errors.New("agentc-compiler is not installed here")
			})
			if handedOver != tt.handover {
				t.Fatalf("handed over: %v, want %v (exit %d)\n%s", handedOver, tt.handover, code, stderr.String())
			}
			_, statErr := os.Stat(filepath.Join(dir, "events-"+tt.path))
			if !tt.handover {
				if code != 0 {
					t.Fatalf("exit %d\n%s", code, stderr.String())
				}
				if stdout.Len() == 0 || statErr != nil {
					t.Errorf("the run left no answer or no events file: %q, %v", stdout.String(), statErr)
				}
				return
			}
			want := "is not a compiled plan, and agentc-runtime runs only plans: agentc-compiler is not installed here"
			if code != cli.ExitFindings || !strings.Contains(stderr.String(), want) {
				t.Errorf("exit %d, want 1 and %q\n%s", code, want, stderr.String())
			}
			if in.read || stdout.Len() > 0 || statErr == nil {
				t.Errorf("the run began before it was handed over: input read %v, stdout %q, events file %v", in.read, stdout.String(), statErr)
			}
			// The compiler program runs the same command line.
			stdout.Reset()
			stderr.Reset()
			code = cli.Run(args, cli.Env{Stdin: strings.NewReader(`{"title": "t"}`), Stdout: &stdout, Stderr: &stderr, Dir: dir}, full)
			if code != 0 || stdout.Len() == 0 {
				t.Errorf("the compiler program: exit %d, stdout %q\n%s", code, stdout.String(), stderr.String())
			}
		})
	}
}

// TestRuntimePassesOn: the runtime program runs only well-formed runs;
// every other command line goes to the compiler program untouched.
func TestRuntimePassesOn(t *testing.T) {
	for _, args := range [][]string{
		{"vet", "x.cue"}, {}, {"--help"}, {"run", "--help"}, {"run", "-h"}, {"run", "--nope", "p.json"},
		{"run", "a.json", "b.json"}, {"run", "p.json", "--input"}, {"help", "run"},
		// Flags that exclude each other, even empty, as the compiler
		// program's command line decides.
		{"run", "p.json", "--record", "j", "--replay", "k"}, {"run", "p.json", "--record=", "--replay="},
	} {
		var stdout, stderr bytes.Buffer
		passed := false
		code := runcmd.Run(args, runcmd.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}, func() error {
			passed = true
			return errors.New("not here")
		})
		if !passed || code != runcmd.ExitFindings || stdout.Len() > 0 || !strings.Contains(stderr.String(), "agentc-runtime runs only plans, and could not pass this command line on: not here") {
			t.Errorf("%q: passed on %v, exit %d\n%s%s", args, passed, code, stdout.String(), stderr.String())
		}
	}
}
