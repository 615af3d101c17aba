//go:build linux

package tramp

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// system is what every confined program may read and execute: the
// system's programs and libraries, and what the dynamic loader reads.
// Paths missing here are skipped. /etc as a whole, /home, /root, /tmp and
// /proc (which shows every process's environment) are left out.
var system = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload",
	"/etc/localtime", "/etc/alternatives", "/etc/gitconfig", "/nix/store", "/gnu/store",
	"/dev/zero", "/dev/random", "/dev/urandom", "/dev/full",
}

// systemWrite is what every confined program may write.
var systemWrite = []string{"/dev/null"}

// network is what a program that may use the network also reads: name
// resolution and certificates.
var network = []string{
	"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/services",
	"/etc/host.conf", "/etc/ssl", "/etc/pki", "/etc/ca-certificates", "/etc/crypto-policies",
}

// trampoline runs the program confined, as its child, and reports how it
// ended.
func trampoline(s Spec) int {
	// Of what this process holds, the program gets standard input,
	// output and error alone: not a descriptor agentc was itself given
	// open (Landlock rules paths, not what is open already), nor the
	// status pipe or the paths the rules are made on.
	closeOnExec()
	status := os.NewFile(uintptr(s.Status), "status")
	// No process may trace this one or read its memory without a
	// capability the program is not given (see dropCapabilities): its
	// threads other than the one that starts the program are not
	// restricted, and the program shares that one's Landlock domain.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(status, "error not dumpable: %v", err)
		return 127
	}
	if s.NS {
		// Before /proc is made read-only.
		refuseUserNamespaces()
	}
	if s.Mounts {
		if err := readOnlyView(s); err != nil {
			fmt.Fprintf(status, "error %v", err)
			return 127
		}
	}
	if !s.NS {
		// Orphans become this process's children, to be killed at the end.
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// The program may signal the thread that started it (it shares its
	// Landlock domain): what would end this process, or make Go print
	// its goroutines on the program's standard error, is dropped. (A
	// fault of this process's own is still one: Go catches only the
	// signals kill(2) sends.)
	drop := make(chan os.Signal, 16)
	signal.Notify(drop, syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE,
		syscall.SIGILL, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGPIPE,
		syscall.SIGALRM, syscall.SIGVTALRM, syscall.SIGPROF, syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGSTKFLT,
		syscall.SIGPWR, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	go func() {
		for range drop {
		}
	}()
	// The restrictions are the thread's that starts the program, alone:
	// the subreaper, on another thread, can still list its children in
	// /proc, which the program may not read. A goroutine that ends locked
	// to its thread ends the thread, so no other code ever runs there.
	ended := make(chan outcome, 1)
	go func() {
		runtime.LockOSThread()
		ended <- confined(s, sigs)
	}()
	out := <-ended
	signal.Stop(sigs)
	if !s.NS {
		killChildren()
	}
	if out.fail != "" {
		fmt.Fprintf(status, "error %s", out.fail)
		return 127
	}
	// In its PID namespace, this process is the first: when it exits,
	// the kernel kills every other process there before the parent
	// learns of it.
	if out.cpu > 0 {
		fmt.Fprintf(status, "status %d cpu %d", int(out.ws), out.cpu.Milliseconds())
	} else {
		fmt.Fprintf(status, "status %d", int(out.ws))
	}
	return 0
}

// outcome is how the program ended, or why it could not start; cpu,
// when the program was killed (SIGKILL) having used its CPU time's soft
// limit, is the CPU time it used: the kernel kills at the hard limit,
// and a program that ignores the SIGXCPU at the soft one, as Go's do,
// dies of that. wait4(2) counts the CPU time with that of the processes
// the program waited for, so it is reported as a figure, not as proof.
type outcome struct {
	ws   syscall.WaitStatus
	fail string
	cpu  time.Duration
}

// confined restricts the calling thread, locked to it, starts the program
// from it, passes sigs on to it and waits for it.
func confined(s Spec, sigs <-chan os.Signal) outcome {
	// Another thread of this process may be busy in the runtime; the
	// program inherits the restrictions of the thread that forks it, and
	// dies with it (Pdeathsig).
	fd, flags, err := ruleset(s)
	if err != nil {
		return outcome{fail: err.Error()}
	}
	if err := joinSessionKeyring(); err != nil && !s.Seccomp {
		if fd >= 0 {
			unix.Close(fd)
		}
		return outcome{fail: "a session keyring of the program's own: " + err.Error()}
	}
	if err := dropCapabilities(); err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return outcome{fail: "capabilities: " + err.Error()}
	}
	// no_new_privs lets the thread restrict itself without privileges,
	// and keeps a set-user-ID program from gaining its owner's rights.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return outcome{fail: "no_new_privs: " + err.Error()}
	}
	if fd >= 0 {
		err := llsys.LandlockRestrictSelf(fd, flags)
		unix.Close(fd)
		if err != nil {
			return outcome{fail: "landlock: " + err.Error()}
		}
	}
	if s.Seccomp {
		if err := installFilter(); err != nil {
			return outcome{fail: "seccomp: " + err.Error()}
		}
	}
	path, argv, files := s.Path, s.Argv, []uintptr{0, 1, 2}
	var report, reportW *os.File // the stage's report of a failure: nothing when the program started
	if s.Limits != nil {
		stageArgs, err := args(StageProgram, stageMarker, stageSpec{Path: s.Path, Limits: *s.Limits, Err: 3}, s.Argv)
		if err != nil {
			return outcome{fail: "confine.limits: " + err.Error()}
		}
		if report, reportW, err = os.Pipe(); err != nil {
			return outcome{fail: "confine.limits: " + err.Error()}
		}
		defer report.Close()
		path, argv, files = selfExe, stageArgs, append(files, reportW.Fd())
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: files,
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if reportW != nil {
		reportW.Close()
	}
	if err != nil {
		if report != nil {
			return outcome{fail: "starting the program under confine.limits: " + Reason(err)}
		}
		return outcome{fail: Reason(err)}
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case sig := <-sigs:
				_ = syscall.Kill(pid, sig.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	fail := ""
	if report != nil {
		// The stage's end is closed by its execve of the program, or
		// written with why it could not set a limit or start it.
		b, _ := io.ReadAll(io.LimitReader(report, 64))
		fail = stageFailure(b, *s.Limits)
	}
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	for {
		got, err := syscall.Wait4(-1, &ws, 0, &ru)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || got == pid {
			out := outcome{ws: ws, fail: fail}
			if s.Limits != nil && s.Limits.CPU > 0 && err == nil && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
				// The kernel kills at the hard limit by its own count of
				// ticks, which can be a tenth above what wait4 reports
				// (1.85 s for a kill at 2 s): the soft limit is the line.
				if used >= time.Duration(s.Limits.CPU)*time.Second {
					out.cpu = used
				}
			}
			return out
		}
	}
}

// readOnlyView makes every mount of this process's mount namespace
// read-only but s.Write, each bound read-write over itself: Landlock rules
// a file's contents, not its mode, times or attributes, which a program
// may change on any file its user owns; on a read-only mount it cannot
// (EROFS). The namespace is this call's alone: nothing of it reaches the
// host's.
func readOnlyView(s Spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	// The descriptors held for s.Write (after s.Read's) name mounts of
	// agentc's namespace; each path is opened again here, where the
	// mounts are this namespace's copies. One no longer at its name (it
	// was removed, or another put there) is left read-only: the Landlock
	// rules, made on what was held, would not let the program write
	// what is there now either.
	writes := s.Held[len(s.Read):]
	var own, clones []int
	defer func() {
		for _, fd := range append(own, clones...) {
			unix.Close(fd)
		}
	}()
	for i, fd := range writes {
		name := shown(s, len(s.Read)+i, "")
		path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if err != nil {
			continue
		}
		o, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var held, here unix.Stat_t
		if unix.Fstat(fd, &held) != nil || unix.Fstat(o, &here) != nil || held.Dev != here.Dev || held.Ino != here.Ino {
			unix.Close(o)
			continue
		}
		own = append(own, o)
		// Each is copied, as it is mounted, before the tree is made
		// read-only.
		c, err := unix.OpenTree(o, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("confine.write path %q: %w", name, err)
		}
		clones = append(clones, c)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("making the file system read-only: %w", err)
	}
	for i := range clones {
		err := unix.MoveMount(clones[i], "", own[i], "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
		switch {
		case errors.Is(err, unix.ENOENT):
			// Removed since it was checked: left read-only, as above
			// (a removed directory takes no new entries anyway).
		case err != nil:
			return fmt.Errorf("binding a confine.write path read-write: %w", err)
		}
	}
	// Standard input, output or error that is no pipe or socket was
	// opened in agentc's namespace (its /dev/null, the input a call is
	// given), on a mount this one did not make read-only: the program
	// gets this namespace's /dev/null in its place, whose mode it cannot
	// change.
	for fd := 0; fd <= 2; fd++ {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			continue
		}
		if t := st.Mode & unix.S_IFMT; t == unix.S_IFIFO || t == unix.S_IFSOCK {
			continue
		}
		null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening /dev/null: %w", err)
		}
		err = unix.Dup3(null, fd, 0)
		unix.Close(null)
		if err != nil {
			return fmt.Errorf("giving the program /dev/null: %w", err)
		}
	}
	// The working directory is entered again, through what is mounted
	// on it now.
	if wd, err := os.Getwd(); err == nil {
		if err := unix.Chdir(wd); err != nil {
			return fmt.Errorf("entering the working directory again: %w", err)
		}
	}
	return nil
}

// refuseUserNamespaces sets to 0 how many user namespaces may be made in
// this process's, the call's own: a user namespace would give the program
// every capability over the namespaces it then makes (mount, network...),
// and so reach the kernel's code behind them, which is much of what
// attackers of a kernel use. The kernel counts each against every
// namespace above it, so this holds the program's descendants too; it
// then fails with ENOSPC. The program cannot set it again: that takes
// CAP_SYS_RESOURCE here, which it does not have (see dropCapabilities).
// Where /proc/sys cannot be written (a container mounts it read-only) the
// program runs as before, able to make one, rather than not at all.
func refuseUserNamespaces() {
	if f, err := os.OpenFile("/proc/sys/user/max_user_namespaces", os.O_WRONLY, 0); err == nil {
		f.WriteString("0")
		f.Close()
	}
}

// shown is how the i'th path of s (Read then Write) is written, or
// otherwise when s does not say.
func shown(s Spec, i int, otherwise string) string {
	if i < len(s.Shown) {
		return s.Shown[i]
	}
	return otherwise
}

// closeOnExec marks every descriptor past standard error close-on-exec.
func closeOnExec() {
	if unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Before Linux 5.11: each one /proc lists.
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// dropCapabilities leaves the calling thread, and so the program it
// starts, no capability: as root (here or in the user namespace) the
// program would have them all, and with CAP_SYS_PTRACE it could trace the
// other threads of this process, which no rule restricts, or with
// CAP_SYS_RESOURCE raise its limits. Where the thread may (CAP_SETPCAP),
// it first makes root gain none at execve (SECBIT_NOROOT, locked); a
// thread without it has no capability a program could gain at execve
// but through a file's, which no_new_privs refuses.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		// linux/securebits.h: SECBIT_NOROOT and SECBIT_NO_CAP_AMBIENT_RAISE,
		// each with its lock.
		const bits = 1<<0 | 1<<1 | 1<<6 | 1<<7
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, bits, 0, 0, 0); err != nil {
			return fmt.Errorf("securebits: %w", err)
		}
	}
	data = [2]unix.CapUserData{}
	return unix.Capset(&hdr, &data[0])
}

// joinSessionKeyring gives the calling thread, and so the program, a new
// session keyring, empty: a process inherits its starter's, and agentc's
// may hold Kerberos tickets or passwords (cifscreds). (Its user's keyring
// is one of the user namespace's, new too; without one, the seccomp
// filter keeps the program from every keyring.) Where the kernel has no
// keyrings (ENOSYS), or a filter agentc runs under refuses the call
// (EPERM, as Docker's does), the program cannot reach them either.
func joinSessionKeyring() error {
	_, _, e := unix.RawSyscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0)
	if e == 0 || e == unix.ENOSYS || e == unix.EPERM {
		return nil
	}
	return e
}

// selfExe is the stage's path: this program, wherever it is.
const selfExe = "/proc/self/exe"

// The steps whose failure the stage reports: a byte naming it, then the
// error number, in decimal.
const (
	stepCPU      = 'c'
	stepMemory   = 'm'
	stepFileSize = 'f'
	stepStack    = 's'
	stepExec     = 'x'
)

// stageFailure reads the stage's report: "" when it became the program.
func stageFailure(b []byte, l Limits) string {
	if len(b) == 0 {
		return ""
	}
	n, err := strconv.Atoi(string(b[1:]))
	if err != nil {
		return "confine.limits: the program could not be started under them"
	}
	errno := syscall.Errno(n)
	switch b[0] {
	case stepCPU:
		return "confine.limits.cpu: " + errno.Error()
	case stepMemory:
		return "confine.limits.memory: " + errno.Error()
	case stepStack:
		return "confine.limits.memory (the stack): " + errno.Error()
	case stepFileSize:
		return "confine.limits.file_size: " + errno.Error()
	}
	if errno == syscall.ENOMEM && l.Memory > 0 {
		return errno.Error() + " (under confine.limits.memory)"
	}
	return errno.Error()
}

// stage sets s's limits on this process, which the trampoline started
// from its restricted thread, and becomes the program. Past the first
// limit set nothing allocates: the runtime could not grow its heap under
// a memory limit below what it holds. It returns only when it failed,
// having reported why on s.Err.
func stage(s stageSpec) int {
	syscall.CloseOnExec(s.Err)
	report := func(step byte, errno syscall.Errno) int {
		var buf [24]byte
		buf[0] = step
		n := len(buf)
		for v := uint64(errno); ; v /= 10 {
			n--
			buf[n] = byte('0' + v%10)
			if v < 10 {
				break
			}
		}
		m := copy(buf[1:], buf[n:])
		syscall.RawSyscall(syscall.SYS_WRITE, uintptr(s.Err), uintptr(unsafe.Pointer(&buf[0])), uintptr(1+m))
		return 127
	}
	path, err := syscall.BytePtrFromString(s.Path)
	if err != nil {
		return report(stepExec, syscall.EINVAL)
	}
	argv, err := syscall.SlicePtrFromStrings(s.Argv)
	if err != nil {
		return report(stepExec, syscall.EINVAL)
	}
	env, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return report(stepExec, syscall.EINVAL)
	}
	// Each limit, soft and hard, is the lower of the declared and the
	// one inherited: a process cannot raise a hard limit, nor can the
	// program past this one, and a lower soft limit agentc was given is
	// kept. The memory bound holds the stack too, which RLIMIT_DATA does
	// not count.
	set := [4]struct {
		step  byte
		res   int
		value int64
		lim   unix.Rlimit // the one inherited, then the one to set
	}{
		{stepCPU, unix.RLIMIT_CPU, s.Limits.CPU, unix.Rlimit{}},
		{stepFileSize, unix.RLIMIT_FSIZE, s.Limits.FileSize, unix.Rlimit{}},
		{stepStack, unix.RLIMIT_STACK, s.Limits.Memory, unix.Rlimit{}},
		{stepMemory, unix.RLIMIT_DATA, s.Limits.Memory, unix.Rlimit{}},
	}
	for i := range set {
		if set[i].value <= 0 {
			continue
		}
		if _, _, e := syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, uintptr(set[i].res), 0, uintptr(unsafe.Pointer(&set[i].lim)), 0, 0); e != 0 {
			return report(set[i].step, e)
		}
		max := uint64(set[i].value)
		if set[i].res == unix.RLIMIT_CPU {
			max++ // SIGXCPU at the soft limit, SIGKILL a second later
		}
		max = min(max, set[i].lim.Max)
		cur := min(uint64(set[i].value), set[i].lim.Cur, max)
		if set[i].res == unix.RLIMIT_CPU && cur == max && max > 1 {
			cur = max - 1 // a second between SIGXCPU and SIGKILL, under a lower hard limit too
		}
		set[i].lim = unix.Rlimit{Cur: cur, Max: max}
	}
	for i := range set { // memory last: nothing past it allocates
		if set[i].value <= 0 {
			continue
		}
		if _, _, e := syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, uintptr(set[i].res), uintptr(unsafe.Pointer(&set[i].lim)), 0, 0, 0); e != 0 {
			return report(set[i].step, e)
		}
	}
	_, _, e := syscall.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(path)), uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&env[0])))
	runtime.KeepAlive(path)
	runtime.KeepAlive(argv)
	runtime.KeepAlive(env)
	return report(stepExec, e)
}

// ruleset makes the Landlock ruleset: the system's files and the program
// readable, s.Read readable, s.Write writable and, without a network
// namespace, TCP refused unless s.Network. Its descriptor is -1 where the
// kernel has no Landlock (the parent warned of it).
func ruleset(s Spec) (fd int, flags uint32, err error) {
	if v, err := llsys.LandlockGetABIVersion(); err != nil || v < 1 {
		return -1, 0, nil
	}
	rules := append(existing(system, false), existing(systemWrite, true)...)
	prog, err := holdProgram(s.Program)
	if err != nil {
		return -1, 0, err
	}
	defer unix.Close(prog)
	rules = append(rules, landlock.ROFiles("/proc/self/fd/"+strconv.Itoa(prog)))
	if s.Limits != nil {
		// The stage is this program, started again from the restricted
		// thread; the rule is made on the file /proc/self/exe opens.
		rules = append(rules, landlock.ROFiles(selfExe))
	}
	if s.Network {
		rules = append(rules, existing(network, false)...)
	}
	for i, list := range [][]string{s.Read, s.Write} {
		for j, p := range list {
			fi, err := os.Stat(p)
			if err != nil {
				which := "read"
				if i == 1 {
					which = "write"
				}
				return -1, 0, fmt.Errorf("confine.%s path %q: %s", which, shown(s, j+i*len(s.Read), p), Reason(err))
			}
			rules = append(rules, rule(p, fi.IsDir(), i == 1))
		}
	}
	cfg := landlock.V7.BestEffort().EnableLoggingForSubprocesses()
	if s.Network || s.NS {
		// The network is allowed, or kept out by the namespace.
		cfg.HandledAccessNet = 0
	}
	return cfg.NewRulesetFD(rules...)
}

// holdProgram opens the program's path to make its rule on, as the
// declared paths are held: the program is then started by name, and
// whoever may write where that name lies (a stdio MCP server with
// confine.write over it, another run of the manifest) could point a link
// there at / while the rule is made and back at a program for the exec,
// and the rule, made on /, would let the program read every file. Made
// on what is held, the rule lets the exec run that file alone (or a
// system program, allowed anyway), whatever the name leads to by then;
// and what is held must be a regular file, never a directory, whose rule
// would reach every file below it.
func holdProgram(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening the program: %s", Reason(err))
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("opening the program: %s", Reason(err))
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		// Not named: the path shows the manifest's directory.
		return -1, errors.New("the program's path no longer leads to a regular file (a link on it changed since it was found), so it was not started")
	}
	return fd, nil
}

func rule(p string, dir, write bool) landlock.FSRule {
	switch {
	case dir && write:
		return landlock.RWDirs(p)
	case dir:
		return landlock.RODirs(p)
	case write:
		return landlock.RWFiles(p)
	}
	return landlock.ROFiles(p)
}

// existing is the rules for those of paths that exist, directories
// and files apart.
func existing(paths []string, write bool) []landlock.Rule {
	var out []landlock.Rule
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			out = append(out, rule(p, fi.IsDir(), write))
		}
	}
	return out
}

// killChildren kills this process's children until it has none: a
// child subreaper's orphans become its children as their parents die.
func killChildren() {
	self := os.Getpid()
	for {
		for _, pid := range children(self) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.ECHILD) {
			return
		}
	}
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// Reason is an error's text without the path os errors carry.
func Reason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}
