package runcmd_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/cli/cuecmd"
	"agentc.dev/agentc/runtime/journal"
)

// TestRecordLocked: a run recording a journal another holds — a new one or
// one to resume — fails at once, exit 1, naming the holder, and writes
// nothing; once the lock is released the same run records.
func TestRecordLocked(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "aix" {
		t.Skip("no flock")
	}
	dir := t.TempDir()
	agent := filepath.Join(dir, "label.cue")
	if err := os.WriteFile(agent, []byte(label), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "run.jsonl")
	run := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		args = append([]string{"run", agent, "--model", "test", "--input", `{"title": "Crash"}`}, args...)
		code := cli.Run(args, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir}, cuecmd.Compiler())
		return code, stderr.String()
	}
	l, err := journal.Acquire(file)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("journal %s is being recorded by process %d", file, os.Getpid())
	code, stderr := run("--record", file)
	if code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("a new journal, locked: exit %d, want 1 and %q:\n%s", code, want, stderr)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused run wrote the journal: %v", err)
	}
	l.Release()

	if code, stderr := run("--record", file); code != 0 {
		t.Fatalf("record: exit %d\n%s", code, stderr)
	}
	recorded, _ := os.ReadFile(file)
	if _, err := os.Stat(journal.LockFile(file)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file is left after the run: %v", err)
	}

	_, w, err := journal.Resume(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--record", file}, {"--replay", file}} {
		code, stderr := run(args...)
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%s, locked: exit %d, want 1 and %q:\n%s", args[0], code, want, stderr)
		}
	}
	w.Close()
	if now, _ := os.ReadFile(file); !bytes.Equal(now, recorded) {
		t.Errorf("the refused runs changed the journal")
	}
	if code, stderr := run("--replay", file); code != 0 {
		t.Fatalf("replay: exit %d\n%s", code, stderr)
	}
}

// TestEventsIsJournal: --events naming the journal, by any path, is a
// usage error before anything is written.
func TestEventsIsJournal(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "label.cue")
	if err := os.WriteFile(agent, []byte(label), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "run.jsonl")
	t.Chdir(dir)
	run := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		args = append([]string{"run", agent, "--model", "test", "--input", `{"title": "Crash"}`}, args...)
		code := cli.Run(args, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir}, cuecmd.Compiler())
		return code, stderr.String()
	}
	// A journal not yet written, named two ways.
	if code, stderr := run("--record", "run.jsonl", "--events", "sub/../run.jsonl"); code != 2 || !strings.Contains(stderr, "is the same file as") {
		t.Fatalf("exit %d, want 2:\n%s", code, stderr)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the journal was written: %v", err)
	}
	if code, stderr := run("--record", file); code != 0 {
		t.Fatalf("record: exit %d\n%s", code, stderr)
	}
	recorded, _ := os.ReadFile(file)
	if err := os.Symlink(file, filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--record", file, "--events", "./run.jsonl"},
		{"--replay", "run.jsonl", "--events", file},
		{"--replay", "run.jsonl", "--events", "link.jsonl"},
	} {
		if code, stderr := run(args...); code != 2 || !strings.Contains(stderr, "is the same file as") {
			t.Errorf("%q: exit %d, want 2:\n%s", args, code, stderr)
		}
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, recorded) {
		t.Errorf("the journal changed")
	}
}
