package cuecmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/internal/cli"
)

// TestRunBudget: the runs of one agentc test command share a budget
// (runTime): past it, each later case fails as not run, never passes, and
// the command ends; fault runs alike. Fifty cases of a prompt that renders for its whole
// bound (most of a second each) took the full time of every case.
func TestRunBudget(t *testing.T) {
	dir := t.TempDir()
	agent := func(prompt string, cases int) {
		var tests strings.Builder
		for i := range cases {
			fmt.Fprintf(&tests, "tests: c%d: input: null\n", i)
		}
		src := `name: "bomb"
model: {provider: "test", name: "m"}
instructions: "Answer."
prompt: "` + prompt + `"
output: {description: "The answer.", schema: {type: "object", properties: msg: type: "string", required: ["msg"]}}
budgets: deadline: "60s"
` + tests.String()
		if err := os.WriteFile(filepath.Join(dir, "bomb.cue"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agentc := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := cli.Run(args, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir}, Compiler())
		return code, stdout.String() + stderr.String()
	}
	// A journal recorded from a harmless prompt, for every case.
	agent("hi", 1)
	if code, out := agentc("test", "--record", dir); code != 0 {
		t.Fatalf("recording: exit %d\n%s", code, out)
	}
	journal, err := os.ReadFile(filepath.Join(dir, "testdata", "bomb", "c0.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const cases = 50
	for i := 1; i < cases; i++ {
		if err := os.WriteFile(filepath.Join(dir, "testdata", "bomb", fmt.Sprintf("c%d.jsonl", i)), journal, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agent("{{range 100000000000000}}{{end}}hi", cases)

	defer func(d time.Duration) { runTime = d }(runTime)
	runTime = time.Nanosecond
	code, out := agentc("test", "--replay-only", dir)
	if code != cli.ExitFindings {
		t.Errorf("exit %d, want %d", code, cli.ExitFindings)
	}
	// The first case starts within the budget and runs to its bound; it
	// spends the budget, and no other case runs.
	if got := strings.Count(out, "rendering takes more than"); got != 1 {
		t.Errorf("%d cases rendered the prompt, want 1", got)
	}
	notRun := "not run: the runs of this command's cases have taken the 1ns they may take in all"
	if got := strings.Count(out, notRun); got != cases-1 {
		t.Errorf("%d cases not run, want %d:\n%s", got, cases-1, out)
	}
	if strings.Contains(out, "PASS") {
		t.Errorf("a case passed:\n%s", out)
	}

	// Fault runs spend it too: the case passes, and spends it.
	agent("hi", 1)
	code, out = agentc("test", "--faults", dir)
	if code != cli.ExitFindings || !strings.Contains(out, "PASS bomb/c0") || !strings.Contains(out, notRun) {
		t.Errorf("--faults: exit %d, want %d, the case passed and its fault runs not run:\n%s", code, cli.ExitFindings, out)
	}
}
