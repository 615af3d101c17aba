package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/vetcase"
)

var update = flag.Bool("update", os.Getenv("AGENTC_UPDATE") != "", "rewrite the want sections of testdata cases")

// TestVetCases runs agentc vet on every bad manifest in testdata/vet. Each
// case is a txtar archive: the manifest files, an optional "args" file (the
// command line after "agentc"; by default "vet" and every manifest file)
// and "want", the exact output. Every case must fail with exit 1, unless an
// "exit" file gives another code: a case with "exit" 0 is a manifest that vet
// must accept, with nothing to say.
func TestVetCases(t *testing.T) {
	files, err := filepath.Glob("../../testdata/vet/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("want at least 30 bad manifests in testdata/vet, found %d", len(files))
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		abs, _ := filepath.Abs(file)
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			c, err := vetcase.Read(abs, dir)
			if err != nil {
				t.Fatal(err)
			}
			if !c.HasWant && !*update {
				t.Fatal("case has no want section")
			}
			t.Chdir(dir)
			var stdout, stderr bytes.Buffer
			code := run(c.Args, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir})
			want := c.Want
			if *update {
				c.SetWant(stdout.String())
				if err := os.WriteFile(abs, txtar.Format(c.Archive), 0o644); err != nil {
					t.Fatal(err)
				}
				want = stdout.String()
			}
			if code != c.Exit {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, c.Exit, stderr.String())
			}
			if got := stdout.String(); got != want {
				t.Errorf("output differs\n--- got:\n%s--- want:\n%s", got, want)
			}
			if stderr.Len() > 0 {
				t.Errorf("unexpected stderr:\n%s", stderr.String())
			}
			for _, line := range strings.Split(strings.TrimSpace(want), "\n") {
				if i := strings.LastIndex(line, " ["); i >= 0 {
					seen[strings.TrimSuffix(line[i+2:], "]")] = true
				}
			}
		})
	}
	for _, r := range compile.Rules {
		if !seen[r.Code] {
			t.Errorf("no case in testdata/vet produces %s (%s)", r.Code, r.Summary)
		}
	}
	if !slices.ContainsFunc(files, func(f string) bool { return strings.Contains(f, "yaml") }) {
		t.Error("no YAML case in testdata/vet")
	}
}
