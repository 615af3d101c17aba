package exec

import (
	"crypto/rand"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/tool/internal/confine"
)

// traceProbe is memory the helper tries to read in the trampoline, this
// same program: at the same address in both (the test binary is not
// position-independent; if it were, the read fails either way).
var traceProbe = [8]byte{'t', 'r', 'a', 'm', 'p'}

// traceHelper tries to read its parent's memory and, with what "all", to
// trace every process it can name by a small pid (the trampoline's
// threads, in the call's PID namespace) and its parent (the trampoline,
// without one); it says what it managed.
func traceHelper(what string) int {
	targets := map[int]bool{os.Getppid(): true}
	for t := 1; t <= 512 && what == "all"; t++ {
		targets[t] = true
	}
	delete(targets, os.Getpid())
	for t := range targets {
		if what != "all" {
			break
		}
		if err := unix.PtraceSeize(t); err == nil {
			fmt.Printf("traced %d\n", t)
			unix.PtraceDetach(t)
		}
	}
	var b [8]byte
	local := []unix.Iovec{{Base: &b[0], Len: uint64(len(b))}}
	remote := []unix.RemoteIovec{{Base: uintptr(unsafe.Pointer(&traceProbe[0])), Len: len(b)}}
	if n, err := unix.ProcessVMReadv(os.Getppid(), local, remote, 0); err == nil {
		fmt.Printf("read %q from the parent\n", b[:n])
	}
	fmt.Println("done")
	return 0
}

// TestConfinedCannotTrace: a confined program cannot trace the
// trampoline or read its memory, with limits or without, as root or not:
// the trampoline is not dumpable and the program has no capability. The
// trampoline's threads other than the one that starts the program are
// not restricted; a program that traced one ran outside its confinement.
func TestConfinedCannotTrace(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	t.Setenv("EXEC_TEST_TRACE", "all")
	for _, c := range []*plan.Confine{{}, {Limits: &plan.Limits{CPU: "30s"}}} {
		tool := newTool(t, base, plan.Tool{Argv: []string{self}, Env: []string{"EXEC_TEST_TRACE"}, Confine: c})
		if got := call(t, tool, `{}`); got != "done\n" {
			t.Errorf("confined %+v: got %q", *c, got)
		}
	}
	// Unconfined, the same program reads the memory of its parent, this
	// test (which a kernel that lets a process read only its
	// descendants' memory refuses).
	if b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil && strings.TrimSpace(string(b)) != "0" {
		return
	}
	t.Setenv("EXEC_TEST_TRACE", "read")
	tool := newTool(t, base, plan.Tool{Argv: []string{self}, Env: []string{"EXEC_TEST_TRACE"}, Confine: &plan.Confine{Enforce: "off"}})
	if got := call(t, tool, `{}`); !strings.HasPrefix(got, `read "tramp`) {
		t.Errorf("unconfined: got %q", got)
	}
}

// TestConfinedInheritsNoDescriptor: a descriptor agentc was itself given
// open, without close-on-exec (as a parent process may leave one), does
// not reach a confined program, with limits or without: Landlock rules
// paths, not what is open already. Unconfined, it does.
func TestConfinedInheritsNoDescriptor(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "open")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const fd = 200
	if err := unix.Dup3(int(f.Fd()), fd, 0); err != nil { // no O_CLOEXEC
		t.Fatal(err)
	}
	defer unix.Close(fd)
	base := t.TempDir()
	probe := []string{"sh", "-c", "if [ -e /proc/self/fd/200 ]; then echo open; else echo closed; fi"}
	for _, c := range []*plan.Confine{{Read: []string{"/proc"}}, {Read: []string{"/proc"}, Limits: &plan.Limits{FileSize: 1 << 20}}, {Enforce: "off"}} {
		tool := newTool(t, base, plan.Tool{Argv: probe, Confine: c})
		want := "closed\n"
		if c.Enforce == "off" {
			want = "open\n"
		}
		if got := call(t, tool, `{}`); got != want {
			t.Errorf("%+v: got %q, want %q", *c, got, want)
		}
	}
}

// TestConfinedNoSetIDNorOwner: a confined program cannot make a file
// set-user-ID or set-group-ID, nor change a file's owner, even one its
// user owns outside every declared path (Landlock rules neither; the
// seccomp filter refuses both). Unconfined, the same program can.
func TestConfinedNoSetIDNorOwner(t *testing.T) {
	needSeccomp(t)
	base := t.TempDir()
	outside := filepath.Join(t.TempDir(), "program")
	if err := os.WriteFile(outside, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// (chown first: it clears the set-ID bits.)
	script := `chown "$(id -u)" "$1" 2>&1 || echo chown refused; chmod u+s "$1" 2>&1 || echo setuid refused; chmod g+s "$1" 2>&1 || echo setgid refused`
	for _, c := range []*plan.Confine{{}, {Limits: &plan.Limits{FileSize: 1 << 20}}, {Enforce: "off"}} {
		if err := os.Chmod(outside, 0o755); err != nil {
			t.Fatal(err)
		}
		tool := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", script, "sh", outside}, Confine: c})
		got := call(t, tool, `{}`)
		fi, err := os.Stat(outside)
		if err != nil {
			t.Fatal(err)
		}
		if c.Enforce == "off" {
			if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != os.ModeSetuid|os.ModeSetgid || strings.Contains(got, "refused") {
				t.Errorf("unconfined: %v, %q", fi.Mode(), got)
			}
			continue
		}
		for _, want := range []string{"setuid refused", "setgid refused", "chown refused"} {
			if !strings.Contains(got, want) {
				t.Errorf("%+v: %q does not say %q", *c, got, want)
			}
		}
		if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			t.Errorf("%+v: the file is %v", *c, fi.Mode())
		}
	}
}

// signalHelper sends signals that end a Go program, or make it print its
// goroutines, to each thread of its parent (the trampoline) it can name.
func signalHelper() int {
	for _, sig := range []unix.Signal{unix.SIGQUIT, unix.SIGABRT, unix.SIGSEGV, unix.SIGBUS, unix.SIGUSR1, unix.SIGPIPE, unix.SIGALRM} {
		for tid := 1; tid <= 64; tid++ {
			unix.Tgkill(os.Getppid(), tid, sig)
		}
		if os.Getppid() > 64 { // no PID namespace: the threads are the parent's pid and up
			for tid := os.Getppid(); tid <= os.Getppid()+64; tid++ {
				unix.Tgkill(os.Getppid(), tid, sig)
			}
		}
	}
	fmt.Println("sent")
	return 0
}

// TestConfinedSignalsTrampoline: a program that signals the trampoline's
// threads (the one that started it shares its Landlock domain) neither
// ends it nor makes it print its goroutines: the call reports the
// program's own status.
func TestConfinedSignalsTrampoline(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("EXEC_TEST_SIGNAL", "1")
	base := t.TempDir()
	for _, c := range []*plan.Confine{{}, {Limits: &plan.Limits{CPU: "30s"}}} {
		tool := newTool(t, base, plan.Tool{Argv: []string{self}, Env: []string{"EXEC_TEST_SIGNAL"}, Confine: c})
		if got := call(t, tool, `{}`); got != "sent\n" {
			t.Errorf("%+v: got %.300q", *c, got)
		}
	}
}

// TestConfinedMetadataOutside: a confined program cannot change the mode
// or times of a file its user owns outside confine.write (it sees the
// file system read-only there: Landlock rules contents, not metadata),
// and can inside it. Unconfined, it can outside too.
func TestConfinedMetadataOutside(t *testing.T) {
	needConfinement(t, true)
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "notes")
	inside := filepath.Join(base, "out", "notes")
	for _, f := range []string{outside, inside} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := `chmod 666 "$1" 2>&1 || echo chmod refused; touch -d 2001-01-01 "$1" 2>&1 || echo touch refused`
	for _, c := range []*plan.Confine{{Write: []string{"out"}}, {Write: []string{"out"}, Limits: &plan.Limits{CPU: "30s"}}, {Enforce: "off"}} {
		for _, f := range []string{outside, inside} {
			if err := os.Chmod(f, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(f, time.Now(), time.Now()); err != nil {
				t.Fatal(err)
			}
			tool := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", script, "sh", f}, Confine: c})
			got := call(t, tool, `{}`)
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			changed := fi.Mode().Perm() == 0o666 && fi.ModTime().Year() == 2001
			if want := c.Enforce == "off" || f == inside; changed != want {
				t.Errorf("%+v, %s: changed %v, want %v (%v %v, %q)", *c, filepath.Base(filepath.Dir(f)), changed, want, fi.Mode(), fi.ModTime(), got)
			}
		}
	}
}

// TestConfinedStdinInView: the /dev/null a call gives the program as its
// standard input is the one of its read-only view, not agentc's, whose
// times (or, as root, mode) it could change through the descriptor.
func TestConfinedStdinInView(t *testing.T) {
	needConfinement(t, true)
	before, err := os.Stat(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if fi, err := os.Stat(os.DevNull); err == nil && fi.ModTime().Year() == 2001 {
			os.Chtimes(os.DevNull, time.Now(), before.ModTime()) // the old code changed it
		}
	})
	base := t.TempDir()
	tool := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", "touch -c -m -d 2001-01-01 /proc/self/fd/0 2>&1 || echo refused"}, Confine: &plan.Confine{Read: []string{"/proc"}}})
	got := call(t, tool, `{}`)
	fi, err := os.Stat(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if fi.ModTime().Year() == 2001 || !strings.Contains(got, "refused") {
		t.Errorf("the program changed agentc's /dev/null through its standard input: %v, %q", fi.ModTime(), got)
	}
}

// TestConfinedPlantedLink: a tool that may write in a directory puts a
// symbolic link there under the name another tool declares; that tool
// refuses to run rather than hold where the link leads. A declared path
// written absolute is followed as the person wrote it.
func TestConfinedPlantedLink(t *testing.T) {
	needConfinement(t, false)
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "private.txt")
	if err := os.WriteFile(outside, []byte("private\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	planter := newTool(t, base, plan.Tool{Argv: []string{"ln", "-s", outside, "out/report.txt"}, Confine: &plan.Confine{Write: []string{"out"}}})
	if got := call(t, planter, `{}`); got != "(no output)" {
		t.Fatalf("planting: %q", got)
	}
	for _, c := range []*plan.Confine{{Write: []string{"out/report.txt"}}, {Read: []string{"out/report.txt"}}} {
		victim := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", "cat out/report.txt; echo owned > out/report.txt"}, Confine: c})
		got := call(t, victim, `{}`)
		if !strings.HasPrefix(got, "error: starting ") || !strings.Contains(got, "a symbolic link leads it elsewhere") || strings.Contains(got, "private") {
			t.Errorf("%+v: got %q", *c, got)
		}
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "private\n" {
		t.Errorf("the file the link leads to: %q, %v", b, err)
	}
	abs := newTool(t, base, plan.Tool{Argv: []string{"cat", filepath.Join(base, "out", "report.txt")}, Confine: &plan.Confine{Read: []string{filepath.Join(base, "out", "report.txt")}}})
	if got := call(t, abs, `{}`); got != "private\n" {
		t.Errorf("a link declared absolute: got %q", got)
	}
}

// keyHelper looks for the user key desc in its session keyring and reads
// it, adds a key and asks the kernel for one; it says what it managed.
func keyHelper(desc string) int {
	if id, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", desc, 0); err != nil {
		fmt.Printf("search: %v\n", err)
	} else {
		buf := make([]byte, 256)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
		if err == nil {
			fmt.Printf("read %q\n", buf[:min(n, len(buf))])
		} else {
			fmt.Printf("read: %v\n", err)
		}
	}
	if _, err := unix.AddKey("user", desc+"-added", []byte("x"), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
		fmt.Printf("add_key: %v\n", err)
	}
	if _, err := unix.RequestKey("user", desc, "", unix.KEY_SPEC_SESSION_KEYRING); err != nil {
		fmt.Printf("request_key: %v\n", err)
	}
	return 0
}

// TestConfinedKeyring: a confined program cannot reach the keys of
// agentc's session keyring (Kerberos tickets, cifscreds' passwords), nor
// add or ask for a key: the seccomp filter refuses keyctl, add_key and
// request_key, and the restricted thread joins a new session keyring of
// its own before it starts the program. Unconfined, the same program
// reads the key.
func TestConfinedKeyring(t *testing.T) {
	needConfinement(t, false)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	desc := "agentc-test-" + rand.Text()
	t.Setenv("EXEC_TEST_KEYS", desc)
	base := t.TempDir()
	// The session keyring is the thread's: this goroutine's, locked to
	// a thread that ends with it (it is never unlocked), joins one
	// holding the key and makes the calls, whose programs start from it.
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if _, err := unix.KeyctlJoinSessionKeyring("agentc-test"); err != nil {
			t.Errorf("joining a session keyring: %v", err)
			return
		}
		if _, err := unix.AddKey("user", desc, []byte("KEY-PAYLOAD"), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
			t.Errorf("adding a key: %v", err)
			return
		}
		off := newTool(t, base, plan.Tool{Argv: []string{self}, Env: []string{"EXEC_TEST_KEYS"}, Confine: &plan.Confine{Enforce: "off"}})
		if got := call(t, off, `{}`); !strings.Contains(got, "KEY-PAYLOAD") {
			t.Errorf("unconfined, the program did not read the key: %q", got)
		}
		tool := newTool(t, base, plan.Tool{Argv: []string{self}, Env: []string{"EXEC_TEST_KEYS"}, Confine: &plan.Confine{}})
		got := call(t, tool, `{}`)
		if strings.Contains(got, "KEY-PAYLOAD") || !strings.Contains(got, "search: ") {
			t.Errorf("confined, the program reached the session keyring: %q", got)
		}
		if ok, _ := confine.Seccomp(); ok {
			for _, want := range []string{"search: operation not permitted", "add_key: operation not permitted", "request_key: operation not permitted"} {
				if !strings.Contains(got, want) {
					t.Errorf("confined: got %q, want %q", got, want)
				}
			}
		}
	}()
	<-done
}

// usernsHelper starts true in a user namespace of its own (clone(2), as
// Go starts a process so) and says whether it could.
func usernsHelper() int {
	cmd := osexec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	if err := cmd.Run(); err != nil {
		fmt.Printf("clone(CLONE_NEWUSER): %v\n", err)
		return 1
	}
	fmt.Println("made a user namespace")
	return 0
}

// TestConfinedUserNamespace: a confined program cannot make a user
// namespace of its own, by unshare(2) or clone(2): one would give it
// every capability over the new namespaces it then makes, and so the
// kernel's code behind them. Unconfined, the same programs can.
func TestConfinedUserNamespace(t *testing.T) {
	needConfinement(t, true)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("EXEC_TEST_USERNS", "1")
	argvs := [][]string{{self}}
	if unshare, err := osexec.LookPath("unshare"); err == nil {
		argvs = append(argvs, []string{unshare, "-U", "echo", "made a user namespace"})
	}
	base := t.TempDir()
	for _, argv := range argvs {
		for _, c := range []*plan.Confine{{Enforce: "off"}, {}, {Limits: &plan.Limits{CPU: "10s"}}} {
			got := call(t, newTool(t, base, plan.Tool{Argv: argv, Env: []string{"EXEC_TEST_USERNS"}, Confine: c}), `{}`)
			if made := strings.Contains(got, "made a user namespace"); made != (c.Enforce == "off") {
				t.Errorf("%s, enforce %q, limits %v: got %q", filepath.Base(argv[0]), c.Enforce, c.Limits != nil, got)
			}
		}
	}
}
