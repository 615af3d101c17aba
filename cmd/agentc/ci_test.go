package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"agentc.dev/agentc/internal/cli"
)

// TestCIWorkflows: the GitHub Actions workflows docs/ci.md shows pass
// actionlint (built from the Go module proxy, see tools_test.go), and the
// page shows them as the files hold them.
func TestCIWorkflows(t *testing.T) {
	workflows, _ := filepath.Glob("../../docs/ci/*.yml")
	if len(workflows) == 0 {
		t.Fatal("no workflows in docs/ci")
	}
	prog, err := actionlintTool.program()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(prog, append([]string{"-no-color"}, workflows...)...).CombinedOutput()
	if err != nil {
		t.Errorf("actionlint %s: %v\n%s", strings.Join(workflows, " "), err, out)
	}
	// A workflow it must refuse, so that a silent actionlint fails here.
	out, err = exec.Command(prog, "-no-color", "testdata/actionlint/bad.yml").CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte(`"steps" section is missing`)) {
		t.Errorf("actionlint passed testdata/actionlint/bad.yml (%v):\n%s", err, out)
	}
	page, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../docs/ci/*")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(page, data) {
			t.Errorf("docs/ci.md does not show %s as it is", filepath.Base(f))
		}
	}
}

// TestPreCommitHooks runs the entries of .pre-commit-hooks.yaml, as
// pre-commit runs them, over a tree whose agent vets and is locked, and
// over one whose agent does not vet.
func TestPreCommitHooks(t *testing.T) {
	data, err := os.ReadFile("../../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct {
		ID, Entry, Language string
		PassFilenames       bool `yaml:"pass_filenames"`
	}
	if err := yaml.Unmarshal(data, &hooks); err != nil {
		t.Fatal(err)
	}
	if len(hooks) < 2 {
		t.Fatalf("found %d hooks, want vet and digest", len(hooks))
	}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	good, bad := t.TempDir(), t.TempDir()
	for _, f := range []string{"issue-triage.cue", "invoice-extractor.cue"} {
		src, err := os.ReadFile(filepath.Join(examples, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(good, f), src, 0o644)
		os.WriteFile(filepath.Join(bad, f), src, 0o644)
	}
	triage, _ := os.ReadFile(filepath.Join(bad, "issue-triage.cue"))
	if !bytes.Contains(triage, []byte("\nbudgets:")) {
		t.Fatal("examples/issue-triage.cue has no budgets")
	}
	os.WriteFile(filepath.Join(bad, "issue-triage.cue"), bytes.Replace(triage, []byte("\nbudgets:"), []byte("\nbudget:"), 1), 0o644)
	agentc := func(dir string, args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		t.Chdir(dir)
		code := run(args, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir})
		return code, stdout.String() + stderr.String()
	}
	if code, out := agentc(good, "digest", "--write", "./..."); code != 0 {
		t.Fatalf("digest --write: exit %d\n%s", code, out)
	}
	for _, h := range hooks {
		args := strings.Fields(h.Entry)
		if h.Language != "golang" || len(args) < 2 || args[0] != "agentc" || h.PassFilenames {
			t.Errorf("hook %s: entry %q, language %s: want an agentc command, language golang, no file names passed", h.ID, h.Entry, h.Language)
			continue
		}
		if code, out := agentc(good, args[1:]...); code != 0 {
			t.Errorf("hook %s over a good tree: exit %d\n%s", h.ID, code, out)
		}
		if code, out := agentc(bad, args[1:]...); code != 1 {
			t.Errorf("hook %s over a tree with a bad manifest: exit %d, want 1\n%s", h.ID, code, out)
		}
	}
}

// TestPreCommitLocalHooks: the local hooks docs/ci.md shows run what
// .pre-commit-hooks.yaml declares, with agentc built from this module.
func TestPreCommitLocalHooks(t *testing.T) {
	type hook struct {
		ID, Name, Entry, Language, Files string
		PassFilenames                    bool     `yaml:"pass_filenames"`
		Deps                             []string `yaml:"additional_dependencies"`
	}
	var declared []hook
	data, err := os.ReadFile("../../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &declared); err != nil {
		t.Fatal(err)
	}
	var config struct {
		Repos []struct {
			Repo  string
			Hooks []hook
		}
	}
	data, err = os.ReadFile("../../docs/ci/pre-commit-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &config); err != nil {
		t.Fatal(err)
	}
	if len(config.Repos) != 1 || config.Repos[0].Repo != "local" {
		t.Fatalf("want one local repo, got %+v", config.Repos)
	}
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	module, _, _ := strings.Cut(strings.TrimPrefix(string(mod), "module "), "\n")
	local := config.Repos[0].Hooks
	if len(local) != len(declared) {
		t.Fatalf("%d local hooks, %d declared", len(local), len(declared))
	}
	for i, h := range local {
		d := declared[i]
		if h.ID != d.ID || h.Name != d.Name || h.Entry != d.Entry || h.Language != d.Language || h.Files != d.Files || h.PassFilenames != d.PassFilenames {
			t.Errorf("local hook %+v differs from the declared %+v", h, d)
		}
		if want := module + "/cmd/agentc@latest"; len(h.Deps) != 1 || h.Deps[0] != want {
			t.Errorf("hook %s: additional_dependencies %v, want [%s]", h.ID, h.Deps, want)
		}
	}
}
