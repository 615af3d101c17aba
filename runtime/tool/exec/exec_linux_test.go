package exec

import (
	"context"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentc.dev/agentc/internal/await"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/tool/internal/proc"
)

// TestMain makes the test process adopt orphans, as the agentc command
// does, so that what a call kills is reaped here rather than by PID 1;
// as a helper (see TestParentDeath) it runs one call and waits.
func TestMain(m *testing.M) {
	if addr := os.Getenv("EXEC_TEST_CONNECT"); addr != "" {
		os.Exit(connectHelper(addr))
	}
	if seg := os.Getenv("EXEC_TEST_SHM"); seg != "" {
		os.Exit(shmHelper(seg))
	}
	if paths := os.Getenv("EXEC_TEST_UNIX"); paths != "" {
		os.Exit(unixHelper(paths))
	}
	if dir := os.Getenv("EXEC_TEST_INHERIT"); dir != "" {
		os.Exit(inheritHelper(dir, os.Getenv("EXEC_TEST_INHERIT_CPU")))
	}
	if os.Getenv("EXEC_TEST_SIGNAL") != "" {
		os.Exit(signalHelper())
	}
	if what := os.Getenv("EXEC_TEST_TRACE"); what != "" {
		os.Exit(traceHelper(what))
	}
	if desc := os.Getenv("EXEC_TEST_KEYS"); desc != "" {
		os.Exit(keyHelper(desc))
	}
	if os.Getenv("EXEC_TEST_USERNS") != "" {
		os.Exit(usernsHelper())
	}
	if dir := os.Getenv("EXEC_TEST_OUTDIR"); dir != "" {
		nofile, _ := strconv.ParseUint(os.Getenv("EXEC_TEST_OUTDIR_NOFILE"), 10, 64)
		os.Exit(outDirHelper(dir, os.Getenv("EXEC_TEST_OUTDIR_SCRIPT"), nofile))
	}
	if dir := os.Getenv("EXEC_TEST_FLIP"); dir != "" {
		os.Exit(flipHelper(dir))
	}
	if os.Getenv("EXEC_TEST_SPIN") != "" {
		os.Exit(spinHelper())
	}
	if dir := os.Getenv("EXEC_TEST_HELPER_DIR"); dir != "" {
		tool, err := New("run", plan.Tool{Kind: "exec", Description: "Run.", Input: &plan.Input{Schema: []byte(schema)},
			Argv: []string{"sh", "-c", "echo $$ > pid.tmp && mv pid.tmp pid && exec sleep 300"}, Timeout: "300s",
			Confine: &plan.Confine{Enforce: "off"}}, dir)
		if err == nil {
			_, err = tool.Call(context.Background(), nil)
		}
		os.Stderr.WriteString("the helper's call returned: " + errString(err) + "\n")
		os.Exit(1)
	}
	proc.Adopt()
	os.Exit(m.Run())
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// needSetsid skips a test where there is no setsid(1).
func needSetsid(t *testing.T) {
	t.Helper()
	if _, err := osexec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
}

// readPID waits, up to 10 s, for a script to write a pid to the file.
func readPID(t *testing.T, file string) int {
	t.Helper()
	isPID := func(b []byte) bool {
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}
	b, err := await.File(file, isPID, 10*time.Second)
	if err != nil {
		t.Fatalf("no pid in %s: %v", filepath.Base(file), err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// state is a process's state as /proc shows it: 'Z' a zombie, 0 none.
func state(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return f[0][0]
}

// checkExited fails unless pid names no process at all: not one running,
// and not a zombie either (this process adopted it, so must have reaped
// it).
func checkExited(t *testing.T, what string, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		st := state(pid)
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("%s (%d) outlived its call: kill(pid, 0) = %v, state %q", what, pid, err, st)
	}
}

// checkRunning fails unless pid names a process that runs.
func checkRunning(t *testing.T, what string, pid int) {
	t.Helper()
	if st := state(pid); st == 0 || st == 'Z' || st == 'X' {
		t.Errorf("%s (%d) was killed before its call ended (state %q)", what, pid, st)
	}
}

// script is the body of a sh -c that starts, in the background, a
// process that leaves the call's process group and session (setsid),
// waits until it has written its pid to file (it says so through a FIFO),
// and goes on with then.
func script(file, then string) string {
	return "mkfifo " + file + ".ready; setsid sh -c 'echo $$ > " + file + "; echo > " + file + ".ready; exec sleep 300' & " +
		"read r < " + file + ".ready; " + then
}

// TestSetsid: what a call starts in a session of its own is killed when
// the call ends, and with it what that process started, even with its
// environment replaced.
func TestSetsid(t *testing.T) {
	needSetsid(t)
	tests := []struct {
		name, script string
		pids         []string
	}{
		{"setsid", script("a", ""), []string{"a"}},
		{"output redirected", script("a", "") + " >/dev/null 2>&1", []string{"a"}},
		{"a grandchild with its environment replaced",
			"mkfifo a.ready b.ready; setsid sh -c 'env -i sh -c \"echo \\$\\$ > b; echo > b.ready; exec sleep 300\" & echo $$ > a; echo > a.ready; wait' & " +
				"read r < a.ready; read r < b.ready",
			[]string{"a", "b"}},
		{"double fork", "mkfifo a.ready; (setsid sh -c 'echo $$ > a; echo > a.ready; exec sleep 300' &) ; read r < a.ready", []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			tool := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", tt.script}, Timeout: "20s"})
			start := time.Now()
			if got := call(t, tool, `{}`); got != "(no output)" {
				t.Errorf("got %q", got)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the call took %v", d)
			}
			for _, f := range tt.pids {
				checkExited(t, "process "+f, readPID(t, filepath.Join(base, f)))
			}
		})
	}
}

// TestConcurrentOrphans: with two calls under way, the orphan of the one
// that ends is killed then; the other's lives until its own call ends.
func TestConcurrentOrphans(t *testing.T) {
	needSetsid(t)
	base := t.TempDir()
	// The long call ends when the test writes a line to the FIFO release.
	if err := syscall.Mkfifo(filepath.Join(base, "release"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", script("long", "read r < release")}, Timeout: "20s"})
	short := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", script("short", "")}, Timeout: "20s"})
	done := make(chan string, 1)
	go func() { done <- call(t, long, `{}`) }()
	longPID := readPID(t, filepath.Join(base, "long"))

	if got := call(t, short, `{}`); got != "(no output)" {
		t.Errorf("short call: got %q", got)
	}
	checkExited(t, "the short call's orphan", readPID(t, filepath.Join(base, "short")))
	checkRunning(t, "the long call's orphan", longPID)

	if err := os.WriteFile(filepath.Join(base, "release"), []byte("go\n"), 0); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		if got != "(no output)" {
			t.Errorf("long call: got %q", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the long call did not end")
	}
	checkExited(t, "the long call's orphan", longPID)
}

// TestParentDeath: a call's program dies with the process that runs the
// call, even when that is killed with SIGKILL.
func TestParentDeath(t *testing.T) {
	base := t.TempDir()
	helper := osexec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), "EXEC_TEST_HELPER_DIR="+base)
	var stderr strings.Builder
	helper.Stderr = &stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, filepath.Join(base, "pid"))
	helper.Process.Kill()
	helper.Wait()
	if err := await.ProcessEnd(pid, 5*time.Second); err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the program outlived the process that ran it: %v\n%s", err, stderr.String())
	}
	// Orphaned, it came to this process, which reaps it.
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
}
