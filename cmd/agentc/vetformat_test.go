package main

import (
	"bytes"
	"encoding/xml"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/vetcase"
)

// junitReport is what a JUnit consumer reads of vet's report.
type junitReport struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name     string `xml:"name,attr"`
			Failures []struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// junitRootAttrs are the attributes the JUnit schema Jenkins (xunit)
// checks reports against allows on testsuites: not skipped, which only a
// testsuite may carry.
var junitRootAttrs = []string{"name", "time", "tests", "failures", "disabled", "errors"}

// checkJUnitRoot fails unless the report's root is testsuites with only
// the attributes the schema allows it.
func checkJUnitRoot(t *testing.T, report []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(report))
	for {
		tok, err := d.Token()
		if err != nil {
			t.Fatalf("no root element: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "testsuites" {
				t.Fatalf("the root is %s, want testsuites", se.Name.Local)
			}
			for _, a := range se.Attr {
				if !slices.Contains(junitRootAttrs, a.Name.Local) {
					t.Errorf("testsuites carries %s=%q, which the schema does not allow there", a.Name.Local, a.Value)
				}
			}
			return
		}
	}
}

// TestVetJUnit runs every case of testdata/vet again with --format junit
// and reads the report as XML: one test suite; the same exit code; a
// failure for each finding of the text output that fails vet, carrying the
// same line, code and message; every finding in a case's output.
func TestVetJUnit(t *testing.T) {
	files, err := filepath.Glob("../../testdata/vet/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in testdata/vet: %v", err)
	}
	for _, file := range files {
		abs, _ := filepath.Abs(file)
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			dir := t.TempDir()
			c, err := vetcase.Read(abs, dir)
			if err != nil {
				t.Fatal(err)
			}
			if c.Args[0] != "vet" || slices.ContainsFunc(c.Args, func(a string) bool { return a == "--json" || strings.HasPrefix(a, "--format") }) {
				t.Skip("not a vet case in text")
			}
			t.Chdir(dir)
			args := append(slices.Clone(c.Args), "--format", "junit")
			var stdout, stderr bytes.Buffer
			code := run(args, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir})
			if code != c.Exit {
				t.Errorf("exit code %d, want %d as with text; stderr:\n%s", code, c.Exit, stderr.String())
			}
			var rep junitReport
			if err := xml.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("the report is not XML: %v\n%s", err, stdout.String())
			}
			checkJUnitRoot(t, stdout.Bytes())
			if len(rep.Suites) != 1 {
				t.Fatalf("%d test suites, want 1", len(rep.Suites))
			}
			suite := rep.Suites[0]
			if suite.Tests != len(suite.Cases) || rep.Tests != suite.Tests {
				t.Errorf("tests=%d (root %d), but %d test cases", suite.Tests, rep.Tests, len(suite.Cases))
			}
			strict := slices.Contains(c.Args, "--strict")
			var wantFailures, gotFailures, shown []string
			for _, line := range strings.Split(strings.TrimSuffix(c.Want, "\n"), "\n") {
				if strings.Contains(line, ": error: ") || strict && strings.Contains(line, ": warning: ") {
					wantFailures = append(wantFailures, line)
				}
			}
			failing := 0
			for _, tc := range suite.Cases {
				if len(tc.Failures) > 0 {
					failing++
				}
				for _, f := range tc.Failures {
					if !strings.HasSuffix(f.Text, " ["+f.Type+"]") || !strings.Contains(f.Text, ": "+f.Message+" [") {
						t.Errorf("failure of type %q and message %q reads %q", f.Type, f.Message, f.Text)
					}
					gotFailures = append(gotFailures, f.Text)
				}
				shown = append(shown, strings.Split(strings.TrimSuffix(tc.SystemOut, "\n"), "\n")...)
			}
			if suite.Failures != failing || rep.Failures != failing {
				t.Errorf("failures=%d (root %d), but %d test cases failed", suite.Failures, rep.Failures, failing)
			}
			slices.Sort(wantFailures)
			slices.Sort(gotFailures)
			if !slices.Equal(gotFailures, wantFailures) {
				t.Errorf("failures differ from the text output's\n--- got:\n%s\n--- want:\n%s", strings.Join(gotFailures, "\n"), strings.Join(wantFailures, "\n"))
			}
			for _, line := range strings.Split(strings.TrimSuffix(c.Want, "\n"), "\n") {
				if line != "" && !strings.Contains(line, "[NOT_AN_AGENT]") && !slices.Contains(shown, line) {
					t.Errorf("no test case shows %q", line)
				}
			}
		})
	}
}
