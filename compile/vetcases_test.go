package compile_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/contractdiff"
	"agentc.dev/agentc/internal/vetcase"
	"agentc.dev/agentc/manifest"
)

// TestVetCases checks the scenarios of the repository's testdata/vet, and
// of this package's testdata/vet, against this package directly: the
// diagnostics Vet returns, printed as agentc vet prints them, are each
// case's "want" section exactly. cmd/agentc runs the repository's cases
// through the command line; running them here as well means a check that
// goes wrong fails compile's own tests, which is what mutation testing of
// this package measures (see docs/mutation.md). The cases here pin what
// the command line's would not tell apart. A case whose exit is 2 is one
// where Vet fails: its "want" is the error.
func TestVetCases(t *testing.T) {
	shared, err := filepath.Glob("../testdata/vet/*.txtar")
	if err != nil || len(shared) == 0 {
		t.Fatalf("no cases in ../testdata/vet: %v", err)
	}
	own, err := filepath.Glob("testdata/vet/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	files := append(shared, own...)
	for _, file := range files {
		abs, err := filepath.Abs(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			dir := t.TempDir()
			c, err := vetcase.Read(abs, dir)
			if err != nil {
				t.Fatal(err)
			}
			args, want := c.Args, c.Want
			if args[0] != "vet" {
				t.Skipf("not a vet case: %v", args)
			}
			l := manifest.NewLoader()
			l.Stdin = strings.NewReader("")
			l.EvalTimeout = -1 // unbounded: what a case finds must not hang on the machine's load
			verbose := false
			var paths []string
			for i := 1; i < len(args); i++ {
				switch a := args[i]; a {
				case "--strict":
					// Only the exit code depends on it.
				case "-v", "--verbose":
					verbose = true
				case "--eval-timeout":
					// A short limit makes the outcome hang on the machine's
					// speed, and a flaky failure would count as a mutant
					// killed; a long one only keeps a slow load going.
					if i+1 < len(args) {
						if d, err := time.ParseDuration(args[i+1]); err == nil && d >= time.Minute {
							i++
							continue
						}
					}
					t.Skip("timed case: cmd/agentc runs it")
				default:
					if strings.HasPrefix(a, "-") && a != "-" {
						t.Skipf("flag %s is the command line's, not compile's", a)
					}
					paths = append(paths, a)
				}
			}
			t.Chdir(dir)
			comp := compile.New(l)
			comp.CheckContract = contractdiff.Unproved
			results, err := comp.Vet(paths)
			var got strings.Builder
			switch ce := (*compile.ConfigError)(nil); {
			case c.Exit == 2 && errors.As(err, &ce):
				// The command prints it after "agentc: ", and no findings.
				got.WriteString(err.Error() + "\n")
			case c.Exit == 2:
				t.Fatalf("Vet returned error %v, want a *compile.ConfigError (the case's exit is 2)", err)
			case err != nil:
				t.Fatal(err)
			}
			for _, r := range results {
				for _, d := range r.Diagnostics {
					if rule, ok := compile.RuleOf(d.Code); !ok || rule.Severity != d.Severity {
						t.Errorf("%s: a %v of code %s, which compile.Rules gives as %v (listed: %v)", d, d.Severity, d.Code, rule.Severity, ok)
					}
					if d.Severity == compile.Note && !verbose {
						continue
					}
					got.WriteString(d.Format(dir) + "\n")
				}
			}
			if got.String() != want {
				t.Errorf("diagnostics differ\n--- got:\n%s--- want:\n%s", got.String(), want)
			}
		})
	}
}

// TestVetResults checks what Vet says of each agent beside its findings,
// over the case config-nearest: the configuration that applied, and how
// many findings it silenced.
func TestVetResults(t *testing.T) {
	dir := t.TempDir()
	c, err := vetcase.Read(filepath.Join("testdata", "vet", "config-nearest.txtar"), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	l := manifest.NewLoader()
	l.EvalTimeout = -1
	results, err := compile.New(l).Vet(c.Args[1:])
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "project", "agentc.yaml")
	want := []compile.Result{
		{Source: "top.cue"},
		{Source: "project/a.cue", Config: cfg, Silenced: 1},
		{Source: "project/sub/b.cue", Config: cfg, Silenced: 1},
		{Source: "project/mod/c.cue"},
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d", len(results), len(want))
	}
	for i, r := range results {
		if r.Source != want[i].Source || r.Config != want[i].Config || r.Silenced != want[i].Silenced || r.Ignored || r.NotAgent {
			t.Errorf("result %d: source %s, config %q, %d silenced (ignored %v, not an agent %v); want %s, %q, %d", i, r.Source, r.Config, r.Silenced, r.Ignored, r.NotAgent, want[i].Source, want[i].Config, want[i].Silenced)
		}
	}
}
