package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"agentc.dev/agentc/internal/cli"
)

// TestGoldenDigests pins the digests of fixed agents (format
// agentc.plan/v4). If it fails, the digest algorithm, what it covers or the
// normalisation changed: that breaks every consumer's pins and is a format
// version bump, not a golden file update.
func TestGoldenDigests(t *testing.T) {
	abs, err := filepath.Abs("../../testdata/digest/golden.txtar")
	if err != nil {
		t.Fatal(err)
	}
	ar, err := txtar.ParseFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var args []string
	wantIdx := -1
	for i, f := range ar.Files {
		if f.Name == "want" {
			wantIdx = i
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, f.Name)
	}
	t.Chdir(dir)
	var got bytes.Buffer
	for _, a := range args {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"digest", a}, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir}); code != 0 {
			t.Fatalf("digest %s: exit %d\n%s", a, code, stderr.String())
		}
		got.WriteString(a + " " + stdout.String())
	}
	if *update {
		ar.Files[wantIdx].Data = got.Bytes()
		if err := os.WriteFile(abs, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := string(ar.Files[wantIdx].Data); got.String() != want {
		t.Errorf("digests changed\n--- got:\n%s--- want:\n%s", got.String(), want)
	}
	lines := strings.Split(strings.TrimSpace(got.String()), "\n")
	if len(lines) < 2 || strings.Fields(lines[0])[2] != strings.Fields(lines[1])[2] || strings.Fields(lines[0])[3] != strings.Fields(lines[1])[3] {
		t.Errorf("triage.cue and triage.json, one agent written twice, have different digests:\n%s", got.String())
	}
}

// TestExamplesLock: the committed agentc.sum holds the digests of every
// example. After editing an example, review the change and run
// "agentc digest --write examples/".
func TestExamplesLock(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"digest", "--check", "--lock", filepath.Join(root, "agentc.sum"), filepath.Join(root, "examples")},
		cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: root})
	if code != 0 || stdout.Len() > 0 || stderr.Len() > 0 {
		t.Errorf("agentc digest --check examples/: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}
