package exec

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/tool/internal/confine"
)

// needConfinement skips a test where the kernel lacks Landlock or refuses
// new user namespaces, saying which.
func needConfinement(t *testing.T, namespaces bool) {
	t.Helper()
	abi, ns := confine.Support()
	if abi < 1 {
		t.Skip("this kernel has no Landlock")
	}
	if namespaces && !ns {
		t.Skip("this kernel refuses unprivileged user namespaces")
	}
}

// writeRefused says whether a program's output tells of a write refused:
// by the read-only mount outside confine.write (with a mount namespace),
// or by Landlock (without one).
func writeRefused(out string) bool {
	return strings.Contains(out, "Read-only file system") || strings.Contains(out, "Permission denied")
}

// TestConfinedRead: a tool declared with one readable directory reads
// in it, and nothing outside it: not /etc/hostname, not a file beside the
// directory, not through a symbolic link out of it; it writes nothing.
func TestConfinedRead(t *testing.T) {
	needConfinement(t, false)
	base := t.TempDir()
	data := filepath.Join(base, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"data/in.txt": "inside\n", "secret.txt": "beside\n"} {
		if err := os.WriteFile(filepath.Join(base, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../secret.txt", filepath.Join(data, "link")); err != nil {
		t.Fatal(err)
	}
	cat := newTool(t, base, plan.Tool{Argv: []string{"cat", "{{.p}}"}, Confine: &plan.Confine{Read: []string{"data"}}})
	if got := call(t, cat, `{"p":"data/in.txt"}`); got != "inside\n" {
		t.Errorf("reading inside: got %q", got)
	}
	for _, p := range []string{"/etc/hostname", "secret.txt", "data/link", "/proc/self/environ"} {
		got := call(t, cat, `{"p":"`+p+`"}`)
		if !strings.HasPrefix(got, "failed: ") || !strings.Contains(got, "Permission denied") || strings.Contains(got, "beside") {
			t.Errorf("reading %s: got %q, want permission denied", p, got)
		}
	}
	touch := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", "echo x > data/new"}, Confine: &plan.Confine{Read: []string{"data"}}})
	if got := call(t, touch, `{}`); !writeRefused(got) {
		t.Errorf("writing in a readable directory: got %q", got)
	}
	if _, err := os.Stat(filepath.Join(data, "new")); err == nil {
		t.Error("the confined program wrote in a directory declared readable only")
	}
	write := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", "echo x > data/new"}, Confine: &plan.Confine{Write: []string{"data"}}})
	if got := call(t, write, `{}`); got != "(no output)" {
		t.Errorf("writing in a writable directory: got %q", got)
	}
}

// TestConfinedPathSwapped: a declared path is held from the tool's start,
// so that whoever may write beside it (another tool's confine.write) cannot
// put a link to elsewhere under its name and have the next call's rules
// follow it there; nor can a path declared before it existed be swapped
// after the call that first found it.
func TestConfinedPathSwapped(t *testing.T) {
	needConfinement(t, false)
	base := t.TempDir()
	for name, text := range map[string]string{"data/in.txt": "inside\n", "private/key.txt": "PRIVATE-KEY\n", "later/in.txt": "later\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(base, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat := newTool(t, base, plan.Tool{Argv: []string{"cat", "{{.p}}"}, Confine: &plan.Confine{Read: []string{"data", "later/more"}}})
	swap := func(dir string) {
		t.Helper()
		if err := os.RemoveAll(filepath.Join(base, dir)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("private", filepath.Join(base, dir)); err != nil {
			t.Fatal(err)
		}
	}
	// later/more is made after the tool, before its first call.
	if err := os.Mkdir(filepath.Join(base, "later", "more"), 0o755); err != nil {
		t.Fatal(err)
	}
	// data is held since the tool was made.
	swap("data")
	if got := call(t, cat, `{"p":"data/key.txt"}`); strings.Contains(got, "PRIVATE") || !strings.Contains(got, "Permission denied") {
		t.Errorf("reading through a declared directory swapped for a link: got %q", got)
	}
	// later/more, since the first call that found it.
	if err := os.RemoveAll(filepath.Join(base, "later", "more")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../private", filepath.Join(base, "later", "more")); err != nil {
		t.Fatal(err)
	}
	if got := call(t, cat, `{"p":"later/more/key.txt"}`); strings.Contains(got, "PRIVATE") || !strings.Contains(got, "Permission denied") {
		t.Errorf("reading through a later directory swapped for a link: got %q", got)
	}
}

// TestConfinedProgramSwapped: the program's Landlock rule is made on the
// file the trampoline holds, not on its name. A link to the program that
// whoever may write beside it (an mcp server's confine.write) flips
// between cat and / would otherwise have the rule made on / (read and
// execute below it) while the exec, a moment later, runs cat, which then
// reads any file. No call may read the file outside every declared path.
func TestConfinedProgramSwapped(t *testing.T) {
	needConfinement(t, false)
	cat, err := osexec.LookPath("cat")
	if err == nil {
		cat, err = filepath.EvalSymlinks(cat)
	}
	if err != nil {
		t.Skip("no cat here")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "secret.txt"), []byte("OUTSIDE-EVERY-PATH\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cat, filepath.Join(dir, "app")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(dir, "alt")); err != nil {
		t.Fatal(err)
	}
	tool := newTool(t, base, plan.Tool{Argv: []string{"./dir/app", "{{.p}}"}, Confine: &plan.Confine{}})
	// The flipper is a process of its own, which the kernel schedules
	// beside the calls: a goroutine would wait for this process's
	// scheduler while app leads to /, and most calls would find /.
	flip := osexec.Command(self)
	flip.Env = append(os.Environ(), "EXEC_TEST_FLIP="+dir)
	flip.Stdout = os.Stderr
	flip.Stderr = os.Stderr
	if err := flip.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			flip.Process.Kill()
			flip.Wait()
		}
	}
	defer stop()
	var leaked atomic.Bool
	var calls sync.WaitGroup
	for range 2 {
		calls.Go(func() {
			// A call that finds / before it starts (the program "is a
			// directory") returns at once, and is not counted.
			for started := 0; started < swapCalls && !leaked.Load(); {
				got := call(t, tool, `{"p":"secret.txt"}`)
				if strings.Contains(got, "OUTSIDE") {
					leaked.Store(true)
					t.Errorf("the program read a file outside every declared path: %q", got)
				}
				if !strings.HasSuffix(got, "is a directory") {
					started++
				}
			}
		})
	}
	calls.Wait()
	stop()
	// With app left at cat, the call runs cat, which is refused.
	if fi, err := os.Stat(filepath.Join(dir, "app")); err == nil && fi.IsDir() {
		if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(dir, "alt"), unix.AT_FDCWD, filepath.Join(dir, "app"), unix.RENAME_EXCHANGE); err != nil {
			t.Fatal(err)
		}
	}
	if got := call(t, tool, `{"p":"secret.txt"}`); !strings.Contains(got, "Permission denied") {
		t.Errorf("cat of the file outside: got %q, want permission denied", got)
	}
}

// TestConfinedScript: a script (#!) outside every declared path runs
// confined, with limits and without, by its name or through a link to it:
// the rule made on the file held lets the kernel, and then its
// interpreter, read it by name; a file beside it stays unreadable.
func TestConfinedScript(t *testing.T) {
	needConfinement(t, false)
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "bin", "hello"), []byte("#!/bin/sh\necho \"hello $1\"\ncat bin/beside\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "bin", "beside"), []byte("BESIDE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("hello", filepath.Join(base, "bin", "link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		program string
		confine *plan.Confine
	}{
		{"by name", "./bin/hello", &plan.Confine{}},
		{"through a link", "./bin/link", &plan.Confine{}},
		{"with limits", "./bin/hello", &plan.Confine{Limits: &plan.Limits{CPU: "10s"}}},
	} {
		got := call(t, newTool(t, base, plan.Tool{Argv: []string{c.program, "{{.x}}"}, Confine: c.confine}), `{"x":"world"}`)
		if !strings.HasPrefix(got, "failed: ") || !strings.Contains(got, "hello world\n") || !strings.Contains(got, "Permission denied") || strings.Contains(got, "BESIDE") {
			t.Errorf("%s: got %q, want hello world, then permission denied", c.name, got)
		}
	}
}

// flipHelper exchanges dir/app and dir/alt until it is killed: app leads
// to / in short pulses, so that most calls find cat, and of those some
// make the program's rule in a pulse and start it after.
func flipHelper(dir string) int {
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	spin := func(d time.Duration) {
		for start := time.Now(); time.Since(start) < d; {
		}
	}
	for {
		unix.Renameat2(d, "alt", d, "app", unix.RENAME_EXCHANGE)
		spin(20 * time.Microsecond)
		unix.Renameat2(d, "alt", d, "app", unix.RENAME_EXCHANGE)
		spin(80 * time.Microsecond)
	}
}

// TestConfinedPathMadeAgain: a declared directory removed and made again
// in its place (a build's output directory, cleaned) is the one the next
// call reaches: what is held is renewed when its name names a new
// directory where it was, not when it names a link to elsewhere.
func TestConfinedPathMadeAgain(t *testing.T) {
	needConfinement(t, false)
	base := t.TempDir()
	out := filepath.Join(base, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	write := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", "echo x > out/new && echo wrote"}, Confine: &plan.Confine{Write: []string{"out"}}})
	if got := call(t, write, `{}`); got != "wrote\n" {
		t.Fatalf("first call: %q", got)
	}
	for i := range 2 {
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		if got := call(t, write, `{}`); got != "wrote\n" {
			t.Errorf("after the directory was made again (%d): %q", i+1, got)
		}
	}
}

// TestConfinedMissingPath: a declared path that does not exist is an
// error of the call, naming the path as declared, not the base directory.
func TestConfinedMissingPath(t *testing.T) {
	needConfinement(t, false)
	base := t.TempDir()
	tool := newTool(t, base, plan.Tool{Argv: []string{"true"}, Confine: &plan.Confine{Read: []string{"nowhere"}}})
	got := call(t, tool, `{}`)
	if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, `confine.read path "nowhere"`) || strings.Contains(got, base) {
		t.Errorf("got %q", got)
	}
}

// TestConfinedNetwork: a tool that declares no network cannot connect to
// a listener on the loopback interface, which sees no connection; one
// that declares network can.
func TestConfinedNetwork(t *testing.T) {
	needConfinement(t, false)
	if _, ns := confine.Support(); !ns {
		if abi, _ := confine.Support(); abi < 4 {
			t.Skip("this kernel neither makes network namespaces nor has Landlock 4 to refuse TCP")
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("EXEC_TEST_CONNECT", l.Addr().String())
	base := t.TempDir()
	tool := newTool(t, base, plan.Tool{Argv: []string{self}, Env: []string{"EXEC_TEST_CONNECT"}, Confine: &plan.Confine{}})
	got := call(t, tool, `{}`)
	if !strings.HasPrefix(got, "failed: ") || !strings.Contains(got, "connect") {
		t.Errorf("connecting without network: got %q", got)
	}
	// The program has exited: a connection it made is queued already.
	if acceptNow(t, l) {
		t.Fatal("the listener saw a connection from a program declared without network")
	}

	open := newTool(t, base, plan.Tool{Argv: []string{self}, Env: []string{"EXEC_TEST_CONNECT"}, Confine: &plan.Confine{Network: true}})
	if got := call(t, open, `{}`); got != "connected\n" {
		t.Errorf("connecting with network: got %q", got)
	}
	if !acceptNow(t, l) {
		t.Error("the listener saw no connection from a program declared with network")
	}
}

// acceptNow accepts a connection the kernel has queued, without waiting
// for one (a deadline in the past would not even look; the
// listener's descriptor does not block).
func acceptNow(t *testing.T, l net.Listener) bool {
	t.Helper()
	rc, err := l.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var aerr error
	err = rc.Control(func(fd uintptr) {
		var nfd int
		nfd, _, aerr = syscall.Accept4(int(fd), syscall.SOCK_CLOEXEC)
		if aerr == nil {
			syscall.Close(nfd)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return aerr == nil
}

// connectHelper is the program TestConfinedNetwork runs: it connects to
// the address EXEC_TEST_CONNECT names.
func connectHelper(addr string) int {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	c.Close()
	os.Stdout.WriteString("connected\n")
	return 0
}

// TestConfinedSysVIPC: a confined program cannot attach a System V
// shared memory segment of the host, by its id or by its key: it runs in
// an IPC namespace of its own. Unconfined, the same program reads it.
func TestConfinedSysVIPC(t *testing.T) {
	needConfinement(t, true)
	secret := "host segment " + rand.Text()
	var id, key int
	for {
		key = 1 + mrand.IntN(1<<30) // not 0, IPC_PRIVATE
		var err error
		id, err = unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if errors.Is(err, unix.ENOSYS) {
			t.Skip("this kernel has no System V IPC")
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	t.Cleanup(func() { unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
	mem, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	copy(mem, secret)
	if err := unix.SysvShmDetach(mem); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("EXEC_TEST_SHM", fmt.Sprint(id, key))
	base := t.TempDir()
	open := newTool(t, base, plan.Tool{Argv: []string{self}, Env: []string{"EXEC_TEST_SHM"}})
	if got := call(t, open, `{}`); !strings.Contains(got, "shmat: "+secret+"\n") {
		t.Fatalf("unconfined, the helper did not read the segment: %q", got)
	}
	tool := newTool(t, base, plan.Tool{Argv: []string{self}, Env: []string{"EXEC_TEST_SHM"}, Confine: &plan.Confine{}})
	got := call(t, tool, `{}`)
	if strings.Contains(got, secret) || !strings.Contains(got, "shmget: no such file or directory") ||
		!strings.Contains(got, "shmat: invalid argument") {
		t.Errorf("confined, the program reached the host's segment: %q", got)
	}
}

// shmHelper is the program TestConfinedSysVIPC runs: it looks up the
// System V shared memory segment of the key EXEC_TEST_SHM names ("ID
// KEY"), attaches the segment of the id and prints what it holds.
func shmHelper(seg string) int {
	var id, key int
	if _, err := fmt.Sscan(seg, &id, &key); err != nil {
		fmt.Println(err)
		return 2
	}
	if got, err := unix.SysvShmGet(key, 0, 0); err != nil {
		fmt.Println("shmget:", err)
	} else {
		fmt.Println("shmget: found", got)
	}
	mem, err := unix.SysvShmAttach(id, 0, unix.SHM_RDONLY)
	if err != nil {
		fmt.Println("shmat:", err)
		return 1
	}
	fmt.Printf("shmat: %s\n", bytes.TrimRight(mem, "\x00"))
	unix.SysvShmDetach(mem)
	return 0
}

// TestConfinedUnixSocket: a confined program cannot connect to a Unix
// socket of the host by its path, though it may read nothing there and
// connecting needs no read: it can make no Unix socket (socket(2) with
// AF_UNIX is refused, and so is a datagram socketpair, which could send
// to a path), nor an io_uring, which makes sockets without socket(2). A
// stream socketpair, which programs use as a pipe, still works; and the
// listeners see nothing. Unconfined, the same program connects.
func TestConfinedUnixSocket(t *testing.T) {
	needConfinement(t, false)
	needSeccomp(t)
	dir := t.TempDir()
	stream, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "stream.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	dgram, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(dir, "dgram.sock"), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer dgram.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("EXEC_TEST_UNIX", stream.Addr().String()+"\n"+dgram.LocalAddr().String())
	base := t.TempDir()

	open := newTool(t, base, plan.Tool{Argv: []string{self}, Env: []string{"EXEC_TEST_UNIX"}})
	got := lines(call(t, open, `{}`))
	if got["socketpair"] != "ok" || got["connect"] != "ok" || got["sendto"] != "ok" {
		t.Fatalf("unconfined, the helper did not connect: %q", got)
	}
	if !acceptNow(t, stream) || received(t, dgram) != 3 {
		t.Fatal("unconfined, the helper's connection or datagrams did not come")
	}

	tool := newTool(t, base, plan.Tool{Argv: []string{self}, Env: []string{"EXEC_TEST_UNIX"}, Confine: &plan.Confine{}})
	got = lines(call(t, tool, `{}`))
	for step, want := range map[string]string{
		"socketpair":       "ok",
		"connect":          "permission denied",
		"sendto":           "permission denied",
		"socketpair dgram": "permission denied",
		"socketpair raw":   "permission denied",
		"io_uring_setup":   "operation not permitted",
	} {
		if !strings.HasSuffix(got[step], want) {
			t.Errorf("confined, %s: got %q, want %q", step, got[step], want)
		}
	}
	// The program has exited: a connection or datagram it made is queued
	// already.
	if acceptNow(t, stream) {
		t.Error("the stream listener saw a connection from a confined program")
	}
	if n := received(t, dgram); n > 0 {
		t.Errorf("the datagram socket received %d datagrams from a confined program", n)
	}
}

// needSeccomp skips a test where the trampoline installs no seccomp filter.
func needSeccomp(t *testing.T) {
	t.Helper()
	if ok, why := confine.Seccomp(); !ok {
		t.Skip(why)
	}
}

// lines reads the helper's report, "STEP: RESULT" lines, as a map.
func lines(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			m[k] = v
		}
	}
	return m
}

// received counts the datagrams c has queued, without waiting.
func received(t *testing.T, c *net.UnixConn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = rc.Control(func(fd uintptr) {
		buf := make([]byte, 512)
		for {
			if _, _, err := syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT); err != nil {
				return
			}
			n++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// unixHelper is the program TestConfinedUnixSocket runs. EXEC_TEST_UNIX
// names a stream socket and a datagram socket, a line each; it prints,
// a line for each step, "STEP: ok" or "STEP: ERROR":
//   - socketpair: a stream pair carries a byte;
//   - connect: it connects to the stream socket;
//   - sendto: a datagram socket of its own sends to the datagram socket;
//   - socketpair dgram: one end of a datagram pair sends there;
//   - socketpair raw: so does one of a SOCK_RAW pair, which the kernel
//     makes a datagram pair;
//   - io_uring_setup: it sets up an io_uring.
func unixHelper(paths string) int {
	streamPath, dgramPath, _ := strings.Cut(paths, "\n")
	report := func(step string, err error) {
		if err != nil {
			fmt.Printf("%s: %v\n", step, err)
		} else {
			fmt.Printf("%s: ok\n", step)
		}
	}
	report("socketpair", func() error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		if _, err := unix.Write(fds[0], []byte{'x'}); err != nil {
			return err
		}
		b := make([]byte, 1)
		if n, err := unix.Read(fds[1], b); err != nil || n != 1 || b[0] != 'x' {
			return fmt.Errorf("read %d bytes %q: %v", n, b[:n], err)
		}
		return nil
	}())
	report("connect", func() error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Connect(fd, &unix.SockaddrUnix{Name: streamPath})
	}())
	report("sendto", func() error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Sendto(fd, []byte("from a socket"), 0, &unix.SockaddrUnix{Name: dgramPath})
	}())
	report("socketpair dgram", func() error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		return unix.Sendto(fds[0], []byte("from a pair"), 0, &unix.SockaddrUnix{Name: dgramPath})
	}())
	report("socketpair raw", func() error {
		// The kernel makes a SOCK_RAW pair of AF_UNIX a datagram pair.
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		return unix.Sendto(fds[0], []byte("from a raw pair"), 0, &unix.SockaddrUnix{Name: dgramPath})
	}())
	report("io_uring_setup", func() error {
		var params [120]byte // struct io_uring_params
		fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
		if e != 0 {
			return e
		}
		unix.Close(int(fd))
		return nil
	}())
	return 0
}

// TestConfinedForkingOrphan: a process that leaves the call's session
// (setsid), replaces its environment (env -i) and forks every millisecond
// is gone, with everything it forked, when the call returns.
func TestConfinedForkingOrphan(t *testing.T) {
	needConfinement(t, true)
	base := t.TempDir()
	tag := "forker-" + rand.Text()
	// /proc/self, read by the shell itself, names its pid as this
	// process sees it, outside the call's PID namespace.
	bomb := "setsid env -i sh -c 'read pid rest < /proc/self/stat; echo $pid > p.tmp; mv p.tmp p; while :; do sleep 300 & sleep 0.001; done' " + tag + " & " +
		"while [ ! -e p ]; do sleep 0.01; done; sleep 0.05"
	tool := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", bomb}, Timeout: "20s",
		Confine: &plan.Confine{Write: []string{"."}, Read: []string{"/proc"}}})
	if got := call(t, tool, `{}`); got != "(no output)" {
		t.Fatalf("got %q", got)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(base, "p"))))
	if err != nil {
		t.Fatal(err)
	}
	checkExited(t, "the forking orphan", pid)
	if left := tagged(tag); len(left) > 0 {
		t.Errorf("processes of the call remain after it: %v", left)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tagged lists the live processes whose command line holds tag.
func tagged(tag string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), tag) && state(pid) != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// BenchmarkCall measures a call of true, confined and not: the cost of the
// trampoline and the namespaces.
func BenchmarkCall(b *testing.B) {
	for _, c := range []struct {
		name    string
		confine *plan.Confine
	}{{"unconfined", &plan.Confine{Enforce: "off"}}, {"confined", &plan.Confine{}}, {"confined with network", &plan.Confine{Network: true}},
		{"confined with limits", &plan.Confine{Limits: &plan.Limits{CPU: "10s", Memory: 1 << 30, FileSize: 1 << 30}}}} {
		b.Run(c.name, func(b *testing.B) {
			tool := newTool(b, b.TempDir(), plan.Tool{Argv: []string{"true"}, Confine: c.confine})
			for b.Loop() {
				if _, err := tool.Call(context.Background(), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestConfinedOutputFile: a confined program writes its output file in
// the call's directory, and nowhere else: not beside it in the temporary
// directory.
func TestConfinedOutputFile(t *testing.T) {
	needConfinement(t, false)
	ctx, _ := storeCtx(t)
	tool := newTool(t, t.TempDir(), plan.Tool{
		Argv:        []string{"sh", "-c", `printf '` + png + `' > "$1" && echo x > "$(dirname "$(dirname "$1")")/beside-$$"; echo "status $?"`, "sh", `{{output_file "chart"}}`},
		OutputFiles: map[string]plan.OutputFile{"chart": {MediaTypes: []string{"image/png"}}},
		Confine:     &plan.Confine{},
	})
	res, err := tool.Call(ctx, nil)
	if err != nil || res.IsError || len(res.Files) != 1 || res.Files[0].MediaType != "image/png" {
		t.Fatalf("%v %+v", err, res)
	}
	if strings.Contains(res.Content, "status 0") || !writeRefused(res.Content) {
		t.Errorf("the program wrote beside its directory: %q", res.Content)
	}
}

// TestConfinedCallsHoldNothing: what a call adds to the paths its program
// may reach (its output directory) is held for that program alone, so a
// tool called many times, as in a server, holds no more descriptors than
// after its first call; Close lets go of the declared paths too.
func TestConfinedCallsHoldNothing(t *testing.T) {
	needConfinement(t, false)
	ctx, _ := storeCtx(t)
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	tool := newTool(t, base, plan.Tool{
		Argv:        []string{"sh", "-c", `printf '` + png + `' > "$1"`, "sh", `{{output_file "chart"}}`},
		OutputFiles: map[string]plan.OutputFile{"chart": {MediaTypes: []string{"image/png"}}},
		Confine:     &plan.Confine{Read: []string{"data"}},
	})
	open := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	call := func() {
		if res, err := tool.Call(ctx, nil); err != nil || res.IsError || len(res.Files) != 1 {
			t.Fatalf("%v %+v", err, res)
		}
	}
	call()
	before := open()
	for range 20 {
		call()
	}
	if after := open(); after > before {
		t.Errorf("%d descriptors open after 20 more calls, %d before them", after, before)
	}
	tool.Close()
	if after := open(); after >= before {
		t.Errorf("%d descriptors open after Close, %d before it", after, before)
	}
}

// TestConfinedConcurrentRenew: calls of one tool at once, while its
// declared directory is removed and made again over and over, each get a
// descriptor of their own for it: one call renewing the held path closed
// the one another was starting its program with (a bad descriptor, or its
// number reused by another path's).
func TestConfinedConcurrentRenew(t *testing.T) {
	needConfinement(t, false)
	base := t.TempDir()
	out := filepath.Join(base, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	tool := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", "echo ok"}, Confine: &plan.Confine{Write: []string{"out"}}})
	var stop atomic.Bool
	var churn sync.WaitGroup
	churn.Go(func() {
		for !stop.Load() {
			os.Remove(out)
			os.Mkdir(out, 0o755)
		}
	})
	var calls sync.WaitGroup
	var mu sync.Mutex
	bad := map[string]int{}
	for range renewCalls {
		calls.Go(func() {
			for range renewRounds {
				if got := call(t, tool, `{}`); got != "ok\n" {
					mu.Lock()
					bad[got]++
					mu.Unlock()
				}
			}
		})
	}
	calls.Wait()
	stop.Store(true)
	churn.Wait()
	for got, n := range bad {
		t.Errorf("%d calls: %q", n, got)
	}
}
