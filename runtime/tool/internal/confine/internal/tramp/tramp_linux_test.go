package tramp

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestStageFailure: the stage's report reads back as the step that failed
// and its error; nothing reported is a program that started; a report
// that is not one is still a failure.
func TestStageFailure(t *testing.T) {
	l := Limits{CPU: 2, Memory: 64 << 20}
	for _, tt := range []struct {
		b    string
		want string
	}{
		{"", ""},
		{"x" + strconv.Itoa(int(syscall.ENOENT)), "no such file or directory"},
		{"x" + strconv.Itoa(int(syscall.ENOMEM)), "cannot allocate memory (under confine.limits.memory)"},
		{"c" + strconv.Itoa(int(syscall.EPERM)), "confine.limits.cpu: operation not permitted"},
		{"m" + strconv.Itoa(int(syscall.EINVAL)), "confine.limits.memory: invalid argument"},
		{"f" + strconv.Itoa(int(syscall.EPERM)), "confine.limits.file_size: operation not permitted"},
		{"x", "confine.limits: the program could not be started under them"},
		{"xyz", "confine.limits: the program could not be started under them"},
	} {
		if got := stageFailure([]byte(tt.b), l); got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.b, got, tt.want)
		}
	}
	if got := stageFailure([]byte("x"+strconv.Itoa(int(syscall.ENOMEM))), Limits{CPU: 1}); got != "cannot allocate memory" {
		t.Errorf("ENOMEM without a memory limit: got %q", got)
	}
}

// TestHoldProgram: the program's rule is made on a regular file alone,
// followed through a link as it stands; a directory (a link to / put in
// the program's place) is refused, and the error names no path.
func TestHoldProgram(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"link": "prog", "root": "/"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		ok   bool
	}{{"prog", true}, {"link", true}, {"root", false}, {".", false}, {"missing", false}} {
		fd, err := holdProgram(filepath.Join(dir, c.name))
		if fd >= 0 {
			syscall.Close(fd)
		}
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.ok && err == nil:
			t.Errorf("%s: held, want refused", c.name)
		case err != nil && strings.Contains(err.Error(), dir):
			t.Errorf("%s: the error names the path: %v", c.name, err)
		}
	}
}
