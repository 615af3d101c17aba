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

	"agentc.dev/agentc/internal/await"
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

	// Each escaped process says it has written its pid through a FIFO the
	// script reads: the script ends once the pid is there.
	run(t, dir, `mkfifo e.ready; setsid env -i sh -c 'echo $$ > e; echo > e.ready; exec sleep 300' & read r < e.ready`)
	escaped := readPID(t, filepath.Join(dir, "e"))
	if s, ok := readStat(escaped); !ok || s.dead() || s.ppid != self {
		t.Fatalf("the escaped process is %+v (found: %v); want it running, adopted by %d", s, ok, self)
	}

	// This one exits by itself once the test writes a line to q.go.
	run(t, dir, `mkfifo q.ready q.go; setsid env -i sh -c 'echo $$ > q; echo > q.ready; read x < q.go' & read r < q.ready`)
	quitter := readPID(t, filepath.Join(dir, "q"))
	if exited(quitter) {
		t.Fatal("the second escaped process is gone before it exits")
	}
	if err := os.WriteFile(filepath.Join(dir, "q.go"), []byte("quit\n"), 0); err != nil {
		t.Fatal(err)
	}
	if err := await.ProcessEnd(quitter, 5*time.Second); err != nil {
		t.Fatalf("the orphan: %v", err)
	}
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

// TestSweepSparesOtherChildren: a sweep in an adopting process reaps the
// orphans it adopted, never a child this process started itself outside
// a Group (a CUE evaluation of approve_if in another run of a batch, the
// probe of what the kernel can confine), whose exit status os/exec is
// about to take: Wait then failed with "no child processes", and the
// evaluation with it.
func TestSweepSparesOtherChildren(t *testing.T) {
	Adopt()
	if !adopted.Load() {
		t.Skip("the kernel refuses a child subreaper here")
	}
	cmd := exec.Command("sh", "-c", "exit 3")
	cmd.Env = []string{}
	if err := cmd.Start(); err != nil {
		t.Skipf("no sh here: %v", err)
	}
	// It has exited and waits for its status to be taken.
	if err := await.ProcessEnd(cmd.Process.Pid, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	run(t, t.TempDir(), "true")
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("Wait of a child started outside a Group, after a sweep = %v; want exit status 3", err)
	}
}
