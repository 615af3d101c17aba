package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// run runs script as a Group's program to its end, and sweeps.
func run(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir, cmd.Env = dir, []string{"PATH=" + os.Getenv("PATH")}
	g := New(cmd)
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	g.Sweep()
}

func readPID(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// wait polls, up to 5 s, until cond holds.
func wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
	}
}

func exited(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// TestAdopted: a process that escapes its Group's sweep (a new session and
// a replaced environment) is adopted, and Release kills and reaps it; an
// adopted orphan that exits by itself is reaped by the next sweep.
func TestAdopted(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	Adopt()
	if !adopted.Load() {
		t.Skip("the kernel refuses a child subreaper here")
	}
	dir := t.TempDir()

	run(t, dir, `setsid env -i sh -c 'echo $$ > e.tmp && mv e.tmp e; exec sleep 300' & while [ ! -e e ]; do sleep 0.01; done`)
	escaped := readPID(t, filepath.Join(dir, "e"))
	if s, ok := readStat(escaped); !ok || s.dead() || s.ppid != self {
		t.Fatalf("the escaped process is %+v (found: %v); want it running, adopted by %d", s, ok, self)
	}

	run(t, dir, `setsid env -i sh -c 'echo $$ > q.tmp && mv q.tmp q; sleep 0.5' & while [ ! -e q ]; do sleep 0.01; done`)
	quitter := readPID(t, filepath.Join(dir, "q"))
	if exited(quitter) {
		t.Fatal("the second escaped process is gone before it exits")
	}
	wait(t, "the orphan exits", func() bool { s, _ := readStat(quitter); return s.dead() })
	run(t, dir, "true")
	if !exited(quitter) {
		t.Errorf("the adopted orphan that exited by itself was not reaped by the next sweep (state %q)", stateOf(quitter))
	}

	Release()
	if !exited(escaped) {
		syscall.Kill(escaped, syscall.SIGKILL)
		t.Errorf("Release left the escaped process %d (state %q)", escaped, stateOf(escaped))
	}
}

func stateOf(pid int) byte {
	s, _ := readStat(pid)
	return s.state
}

// TestReadStat reads a command name with spaces and parentheses.
func TestReadStat(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "a (b) c")
	if err := os.Symlink("/bin/sleep", prog); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	s, ok := readStat(cmd.Process.Pid)
	if !ok || s.ppid != self || s.dead() || s.kthread || s.start == 0 {
		t.Errorf("readStat = %+v, %v", s, ok)
	}
}
