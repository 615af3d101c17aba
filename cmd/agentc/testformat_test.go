package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"agentc.dev/agentc/internal/cli"
)

// TestTestJUnit: agentc test --format junit writes a report a JUnit
// consumer reads: one test case a case, named by the case with the agent
// as its class, a failure for the case that failed, the exit code of the
// text output.
func TestTestJUnit(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/agenttest/junit.txtar")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range ar.Files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	code := run([]string{"test", "--format", "junit", "agent.cue"}, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir})
	if code != 1 {
		t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr.String())
	}
	var rep junitReport
	if err := xml.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the report is not XML: %v\n%s", err, stdout.String())
	}
	checkJUnitRoot(t, stdout.Bytes())
	if rep.Tests != 2 || rep.Failures != 1 || len(rep.Suites) != 1 || len(rep.Suites[0].Cases) != 2 {
		t.Fatalf("tests=%d failures=%d suites=%d, want 2 cases, 1 failure, 1 suite:\n%s", rep.Tests, rep.Failures, len(rep.Suites), stdout.String())
	}
	for _, c := range rep.Suites[0].Cases {
		switch c.Name {
		case "greets":
			if len(c.Failures) != 0 {
				t.Errorf("greets: failures %+v, want none", c.Failures)
			}
		case "fails":
			if len(c.Failures) != 1 || c.Failures[0].Type != "FAIL" || !strings.Contains(c.Failures[0].Message, "outcome: the run ended ok (bound none), want error") {
				t.Errorf("fails: failures %+v, want the outcome's", c.Failures)
			}
		default:
			t.Errorf("a test case %q, want greets and fails", c.Name)
		}
		if c.SystemOut != "test model: shape only" {
			t.Errorf("%s: system-out %q, want the test model's note", c.Name, c.SystemOut)
		}
	}
}
