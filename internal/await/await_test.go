package await_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"agentc.dev/agentc/internal/await"
)

// TestProcessEnd: a process that runs is waited for until the timeout,
// which fails; once it ends (a zombie, not yet reaped) the wait returns,
// and so it does once it is reaped and gone.
func TestProcessEnd(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs sh")
	}
	cmd := exec.Command("sh", "-c", "read line")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if err := await.ProcessEnd(pid, 50*time.Millisecond); err == nil {
		t.Fatal("a process that runs was reported ended")
	}
	in.Close() // sh reads end of file and exits
	if err := await.ProcessEnd(pid, 30*time.Second); err != nil {
		t.Fatalf("a process that exited (not reaped): %v", err)
	}
	cmd.Wait()
	if err := await.ProcessEnd(pid, 30*time.Second); err != nil {
		t.Fatalf("a process reaped: %v", err)
	}
}

// TestFile: a wait for a file returns what it holds once a write makes it
// match, not a write before; it fails when the timeout passes first.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pid")
	got := make(chan []byte, 1)
	errs := make(chan error, 1)
	go func() {
		data, err := await.File(path, func(b []byte) bool { return bytes.Contains(b, []byte("done")) }, 30*time.Second)
		got <- data
		errs <- err
	}()
	if err := os.WriteFile(path, []byte("started\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("done\n")
	f.Close()
	if data := <-got; string(data) != "started\ndone\n" {
		t.Errorf("read %q, want the file once it holds done", data)
	}
	if err := <-errs; err != nil {
		t.Error(err)
	}
	if _, err := await.File(filepath.Join(dir, "never"), func([]byte) bool { return true }, 50*time.Millisecond); err == nil {
		t.Error("a file never written was found")
	}
}

// TestGlob: a wait for a file by pattern returns the first whose content
// matches, once a write makes it match; it fails when the timeout passes
// first.
func TestGlob(t *testing.T) {
	dir := t.TempDir()
	type result struct {
		path string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		path, err := await.Glob(filepath.Join(dir, ".put-*"), func(b []byte) bool { return len(b) > 0 }, 30*time.Second)
		got <- result{path, err}
	}()
	if err := os.WriteFile(filepath.Join(dir, "other"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".put-empty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".put-full"), []byte("bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || r.path != filepath.Join(dir, ".put-full") {
		t.Errorf("Glob = %q, %v; want the file with bytes", r.path, r.err)
	}
	if _, err := await.Glob(filepath.Join(dir, "never-*"), func([]byte) bool { return true }, 50*time.Millisecond); err == nil {
		t.Error("a file never written was found")
	}
	if _, err := await.Glob(filepath.Join(dir, "bad-["), func([]byte) bool { return true }, time.Hour); !errors.Is(err, filepath.ErrBadPattern) {
		t.Errorf("a bad pattern: %v", err)
	}
}
