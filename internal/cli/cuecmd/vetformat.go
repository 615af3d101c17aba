package cuecmd

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/termtext"
)

// vetFormats are the ways vet prints its findings, by --format name.
var vetFormats = map[string]func(cli.Env, vetReport) error{
	"text":           writeText,
	"json":           writeJSON,
	"github-actions": writeGitHubActions,
	"junit":          writeJUnit,
}

func formatNames() string { return strings.Join(slices.Sorted(maps.Keys(vetFormats)), ", ") }

// writeText prints file:line:col: severity: message [CODE], a finding a
// line.
func writeText(e cli.Env, r vetReport) error {
	for _, a := range r.agents {
		for _, d := range a.shown {
			if _, err := fmt.Fprintln(e.Stdout, diagText(d, r.dir)); err != nil {
				return err
			}
		}
	}
	return nil
}

// diagText is d as a line of text a person reads (Diagnostic.Format):
// the file's name, which a pull request chooses, with its line breaks and
// everything else a terminal would act on escaped, and the message with
// everything but its line breaks escaped (termtext).
func diagText(d compile.Diagnostic, dir string) string {
	return fmt.Sprintf("%s: %s: %s [%s]", termtext.Escape(d.Position(dir)), d.Severity, termtext.Lines(d.Message), d.Code)
}

// writeJSON prints each finding as a JSON object on a line of its own.
func writeJSON(e cli.Env, r vetReport) error {
	enc := json.NewEncoder(e.Stdout)
	for _, a := range r.agents {
		for _, d := range a.shown {
			if err := enc.Encode(d.JSON(r.dir)); err != nil {
				return err
			}
		}
	}
	return nil
}

// actionsCommands are the GitHub Actions workflow commands that annotate
// a file with a finding of each severity.
var actionsCommands = map[compile.Severity]string{compile.Error: "error", compile.Warning: "warning", compile.Note: "notice"}

// writeGitHubActions prints each finding as a workflow command, which a
// GitHub Actions run shows on the line of the pull request it is about:
// ::error file=F,line=L,col=C,title=CODE::message. File names are relative
// to the working directory, which in a workflow is the repository's root.
// The log shows the command's text as it is: the file's name and the
// message are escaped as text is (termtext), an escape sequence or a
// bidi override a pull request put in either written out, before the
// command's own escaping.
func writeGitHubActions(e cli.Env, r vetReport) error {
	for _, a := range r.agents {
		for _, d := range a.shown {
			j := d.JSON(r.dir)
			var props []string
			if j.File != "" {
				props = append(props, "file="+escapeProperty(termtext.Escape(filepath.ToSlash(j.File))))
				if j.Line > 0 {
					props = append(props, "line="+strconv.Itoa(j.Line), "col="+strconv.Itoa(j.Column))
				}
			}
			props = append(props, "title="+escapeProperty(j.Code))
			if _, err := fmt.Fprintf(e.Stdout, "::%s %s::%s\n", actionsCommands[d.Severity], strings.Join(props, ","), escapeData(termtext.Lines(j.Message))); err != nil {
				return err
			}
		}
	}
	return nil
}

// escapeData and escapeProperty escape a workflow command's message and
// property values as the Actions toolkit does (@actions/core, command.ts).
var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return dataEscaper.Replace(s) }
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }

// The JUnit XML report: one test suite, a test case per agent vetted.
// Only a testsuite counts the skipped: the schema Jenkins (xunit) checks
// reports against allows no skipped attribute on testsuites.
type (
	junitSuites struct {
		XMLName  xml.Name   `xml:"testsuites"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Suite    junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string         `xml:"name,attr"`
		ClassName string         `xml:"classname,attr"`
		Time      string         `xml:"time,attr,omitempty"`
		Skipped   *junitSkipped  `xml:"skipped"`
		Failures  []junitFailure `xml:"failure"`
		SystemOut string         `xml:"system-out,omitempty"`
	}
	junitSkipped struct {
		Message string `xml:"message,attr"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

// writeJUnit prints a JUnit XML report, which CI systems show as test
// results: a test case per agent (named by its file or package
// directory), failed by each finding that fails vet, with every finding
// shown in its output; an agent agentc.yaml ignores is a skipped case.
// Files and packages that are not agents have no case. Names and messages
// are escaped as text is (termtext), as every finding in the output is:
// a CI system shows them as they are.
func writeJUnit(e cli.Env, r vetReport) error {
	suite := junitSuite{Name: "agentc vet"}
	for _, a := range r.agents {
		if a.NotAgent {
			continue
		}
		c := junitCase{Name: termtext.Escape(relPath(a.Source, r.dir)), ClassName: "agentc vet"}
		if a.Ignored {
			c.Skipped = &junitSkipped{Message: "ignored by " + termtext.Escape(relPath(a.Config, r.dir))}
			suite.Skipped++
		}
		var out strings.Builder
		for _, d := range a.shown {
			out.WriteString(diagText(d, r.dir) + "\n")
		}
		c.SystemOut = out.String()
		for _, d := range a.failures {
			c.Failures = append(c.Failures, junitFailure{Message: termtext.Lines(d.Message), Type: d.Code, Text: diagText(d, r.dir)})
		}
		if len(c.Failures) > 0 {
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	return encodeJUnit(e.Stdout, suite)
}

// encodeJUnit writes a JUnit XML report of one suite, the counts of the
// document the suite's own.
func encodeJUnit(w io.Writer, suite junitSuite) error {
	doc := junitSuites{Name: suite.Name, Tests: suite.Tests, Failures: suite.Failures, Suite: suite}
	data, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, xml.Header+string(data)+"\n")
	return err
}
