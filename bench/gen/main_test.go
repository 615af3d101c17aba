package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/load"
)

func generate(t *testing.T, n string) string {
	t.Helper()
	out := t.TempDir()
	err := run([]string{"-schema", "../../manifest/schema.cue", "-example", "../../examples/issue-triage.cue", "-n", n, "-out", out}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLayouts(t *testing.T) {
	out := generate(t, "3")
	var files []string
	err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"example/agent.cue", "example/schema.cue",
		"flat/agent-000.cue", "flat/agent-001.cue", "flat/agent-002.cue",
		"tree/agent-000/agent.cue", "tree/agent-001/agent.cue", "tree/agent-002/agent.cue",
		"tree/cue.mod/module.cue", "tree/manifest/schema.cue",
	}
	if strings.Join(files, "\n") != strings.Join(want, "\n") {
		t.Errorf("files:\n%s\nwant:\n%s", strings.Join(files, "\n"), strings.Join(want, "\n"))
	}
	flat, _ := os.ReadFile(filepath.Join(out, "flat/agent-001.cue"))
	tree, _ := os.ReadFile(filepath.Join(out, "tree/agent-001/agent.cue"))
	if !strings.Contains(string(tree), string(flat)) {
		t.Error("the tree's agent does not hold the flat layout's manifest")
	}
}

// vet does what cue vet -c does to the packages below dir.
func vet(dir string, args ...string) error {
	insts := load.Instances(args, &load.Config{Dir: dir})
	values, err := cuecontext.New().BuildInstances(insts)
	if err != nil {
		return err
	}
	for _, v := range values {
		if err := v.Validate(cue.Concrete(true)); err != nil {
			return err
		}
	}
	return nil
}

func TestCueChecksAgainstTheSchema(t *testing.T) {
	out := generate(t, "4")
	tree := filepath.Join(out, "tree")
	example := filepath.Join(out, "example")
	if err := vet(tree, "./..."); err != nil {
		t.Fatalf("tree: %v", err)
	}
	if err := vet(example, "schema.cue", "agent.cue"); err != nil {
		t.Fatalf("example: %v", err)
	}
	// An unknown field and a bad value must be found: the manifests are
	// closed by #Manifest.
	for _, edit := range []struct{ from, to string }{
		{`name: "agent-002"`, `name: "agent-002"` + "\nbogus: 1"},
		{`temperature: 0}`, `temperature: 3}`},
		{`provider: "openai"`, `provider: "opnai"`},
	} {
		out := generate(t, "4")
		path := filepath.Join(out, "tree/agent-002/agent.cue")
		src, _ := os.ReadFile(path)
		if !strings.Contains(string(src), edit.from) {
			t.Fatalf("agent-002 has no %q", edit.from)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(src), edit.from, edit.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := vet(filepath.Join(out, "tree"), "./..."); err == nil {
			t.Errorf("%s: cue found nothing wrong", edit.to)
		}
	}
}

func TestManifestsDiffer(t *testing.T) {
	seen := map[string]bool{}
	for i := range 200 {
		m := string(Manifest(i))
		if seen[m] {
			t.Fatalf("manifest %d repeats another", i)
		}
		seen[m] = true
	}
}
