package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestCIWorkflowsWriteOutside: the workflows write their reports outside
// the checkout, which is the pull request's: a link it put at a report's
// name would have a shell redirect write where the link leads (a file of
// the runner's user), and the upload step send a file of the machine.
// Every redirect of a run step goes under $RUNNER_TEMP, and every upload
// reads from there.
func TestCIWorkflowsWriteOutside(t *testing.T) {
	workflows, _ := filepath.Glob("../../docs/ci/*.yml")
	redirect := regexp.MustCompile(`[0-9]?>>?\s*([^\s&][^\s]*)`)
	for _, f := range workflows {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]struct {
				Steps []struct {
					Name, Run, Uses string
					With            map[string]string
				}
			}
		}
		if err := yaml.Unmarshal(data, &wf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, job := range wf.Jobs {
			for _, st := range job.Steps {
				for _, m := range redirect.FindAllStringSubmatch(st.Run, -1) {
					if to := m[1]; !strings.HasPrefix(to, `"${RUNNER_TEMP}/`) && to != "/dev/null" {
						t.Errorf("%s: step %q writes %s, in the checkout: write under \"${RUNNER_TEMP}\"", filepath.Base(f), st.Name, to)
					}
				}
				if strings.HasPrefix(st.Uses, "actions/upload-artifact@") && !strings.HasPrefix(st.With["path"], "${{ runner.temp }}/") {
					t.Errorf("%s: step %q uploads %s, from the checkout: upload from ${{ runner.temp }}", filepath.Base(f), st.Name, st.With["path"])
				}
			}
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
// .pre-commit-hooks.yaml declares, with the agentc on the PATH.
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
	local := config.Repos[0].Hooks
	if len(local) != len(declared) {
		t.Fatalf("%d local hooks, %d declared", len(local), len(declared))
	}
	for i, h := range local {
		d := declared[i]
		if h.ID != d.ID || h.Name != d.Name || h.Entry != d.Entry || h.Files != d.Files || h.PassFilenames != d.PassFilenames {
			t.Errorf("local hook %+v differs from the declared %+v", h, d)
		}
		// No module proxy serves agentc's module, so a local hook cannot
		// have pre-commit build it: it runs the agentc on the PATH.
		if h.Language != "system" || len(h.Deps) != 0 {
			t.Errorf("hook %s: language %s, additional_dependencies %v; want language system and none", h.ID, h.Language, h.Deps)
		}
	}
}

// installByPath is an install or run of one of this module's packages by
// module path and version, which no module proxy serves.
var installByPath = regexp.MustCompile(`agentc\.dev/agentc[\w./-]*@`)

// TestNoInstallByModulePath: no document, hook or workflow of the
// repository tells anyone to install agentc by module path and version
// (go install agentc.dev/agentc/cmd/agentc@latest, or a hook's
// additional_dependencies): nothing serves that path, and agentc is
// installed from a clone.
func TestNoInstallByModulePath(t *testing.T) {
	checked := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || path == filepath.Join("../..", "testdata", "corpora") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".md", ".yaml", ".yml", ".sh":
		default:
			if filepath.Base(filepath.Dir(path)) != "ci" { // docs/ci/pre-commit
				return nil
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(data), "\n") {
			if m := installByPath.FindString(line); m != "" {
				t.Errorf("%s:%d: %s names a version of agentc's module path, which nothing serves: install from a clone (go install ./cmd/agentc)", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked %d files; the walk missed the documents", checked)
	}
}
