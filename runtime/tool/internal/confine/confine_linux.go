//go:build linux

package confine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"agentc.dev/agentc/internal/leaf/userfile"
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

// kernel is what this kernel offers, probed once.
var kernel struct {
	once    sync.Once
	abi     int  // Landlock's ABI version; 0 without Landlock
	ns      bool // new user, PID and network namespaces can be made
	ipc     bool // and a new IPC namespace with them (a kernel may lack IPC namespaces alone)
	seccomp bool // seccomp filters can be installed
}

func probe() {
	kernel.once.Do(func() {
		if v, err := llsys.LandlockGetABIVersion(); err == nil {
			kernel.abi = v
		}
		if kernel.ns = probeNS(true); kernel.ns {
			kernel.ipc = true
		} else {
			kernel.ns = probeNS(false)
		}
		kernel.seccomp = probeSeccomp()
	})
}

// probeNS starts true in new namespaces, as a tool would be started,
// with an IPC namespace or without.
func probeNS(ipc bool) bool {
	path, err := exec.LookPath("true")
	if err != nil {
		path = "/bin/true"
	}
	cmd := exec.Command(path)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	setNS(cmd.SysProcAttr, false, ipc)
	return cmd.Run() == nil
}

// setNS puts the process in new user, PID, IPC (with ipc) and (unless
// network) network namespaces, as the same user and group as this
// process. The IPC namespace holds System V shared memory, message queues
// and semaphores, and POSIX message queues, of its own, empty: none of
// the host's.
func setNS(a *syscall.SysProcAttr, network, ipc bool) {
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID
	if ipc {
		a.Cloneflags |= syscall.CLONE_NEWIPC
	}
	if !network {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
}

// Check says what of p this kernel cannot enforce: warnings when p's
// Enforce is Best, an error when it is Require.
func (p Policy) Check() (warnings []string, err error) {
	if p.Enforce == Off {
		return nil, nil
	}
	probe()
	var missing []string
	if kernel.abi < 1 {
		missing = append(missing, "this kernel has no Landlock, so the program can read and write every file the user can")
	}
	if !kernel.ns {
		so := []string{
			"processes the program leaves are killed by a subreaper, which a process that also escapes it outlives",
			"the program shares the host's System V IPC (shared memory, message queues, semaphores)",
		}
		if !p.Network {
			if kernel.abi >= 4 {
				so = append(so, "only TCP is kept from the network (by Landlock), not UDP")
			} else {
				so = append(so, "the program can reach the network")
			}
		}
		last := len(so) - 1
		missing = append(missing, "this kernel refuses unprivileged user namespaces, so "+strings.Join(so[:last], ", ")+", and "+so[last])
	} else if !kernel.ipc {
		missing = append(missing, "this kernel has no IPC namespaces, so the program shares the host's System V IPC (shared memory, message queues, semaphores)")
	}
	const sockets = "so the program can connect to any Unix socket on the host by its path, such as an SSH agent's or the Docker daemon's"
	if _, ok := filterArch(); !ok {
		missing = append(missing, "agentc has no seccomp filter for "+runtime.GOARCH+", "+sockets)
	} else if !kernel.seccomp {
		missing = append(missing, "this kernel has no seccomp filters, "+sockets)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if p.Enforce == Require {
		return nil, fmt.Errorf("confine.enforce is %q, but %s", Require, strings.Join(missing, "; and "))
	}
	return missing, nil
}

// Wrap makes cmd, prepared and not started, run its program under p
// through the trampoline; it returns nil when p is Off. cmd's
// SysProcAttr, set already, gets the namespaces.
func (p Policy) Wrap(cmd *exec.Cmd) (*Run, error) {
	if p.Enforce == Off {
		return nil, nil
	}
	probe()
	_, arch := filterArch()
	s := spec{Shown: p.shownPaths(), Network: p.Network, NS: kernel.ns, Seccomp: arch && kernel.seccomp, Limits: p.stageLimits()}
	// The trampoline makes its rules on the paths held, which it
	// inherits, through /proc/self/fd: what they name now is what was
	// held, whatever is at their names.
	var temps []*os.File // each the program's alone: closed once it has started
	closeTemps := func() {
		for _, f := range temps {
			f.Close()
		}
	}
	for i, list := range [][]string{p.Read, p.Write} {
		for _, path := range list {
			f, err := p.pinned(path)
			if err != nil {
				closeTemps()
				which := [...]string{"read", "write"}[i]
				return nil, fmt.Errorf("%w: confine.%s path %q: %s", ErrStart, which, cmp.Or(p.Shown[path], path), reason(err))
			}
			temps = append(temps, f)
			fd := 3 + len(cmd.ExtraFiles)
			cmd.ExtraFiles = append(cmd.ExtraFiles, f)
			s.Held = append(s.Held, fd)
			held := "/proc/self/fd/" + strconv.Itoa(fd)
			if i == 0 {
				s.Read = append(s.Read, held)
			} else {
				s.Write = append(s.Write, held)
			}
		}
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if kernel.ns {
		setNS(cmd.SysProcAttr, p.Network, kernel.ipc)
	}
	r, err := wrap(cmd, s)
	if err != nil {
		closeTemps()
		return nil, err
	}
	r.temps = temps
	return r, nil
}

// openPath opens path to be held: not read, only named (O_PATH), a
// link followed as it stands now.
func openPath(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// errClosed is pinned's error once the policy is closed: its paths are
// not opened by name again, where a link may stand now.
var errClosed = errors.New("the tool is closed")

// pinned returns a descriptor of path for one program, the caller's to
// close once the program has started: for a declared path, a copy of the
// one held (opened and held the first time it exists, renewed as
// renewPath says), so that a held one renewed or closed meanwhile takes
// nothing from a call in progress; for another, path opened for this
// program alone.
func (p Policy) pinned(path string) (*os.File, error) {
	if p.pins == nil || !p.pins.declared[path] {
		return openPath(path)
	}
	p.pins.mu.Lock()
	defer p.pins.mu.Unlock()
	if p.pins.closed {
		return nil, errClosed
	}
	f, ok := p.pins.files[path]
	if ok {
		if g := renewPath(f, path); g != nil {
			f.Close()
			p.pins.files[path] = g
			f = g
		}
	} else {
		var err error
		if f, err = openPath(path); err != nil {
			return nil, err
		}
		if p.pins.files == nil {
			p.pins.files = map[string]*os.File{}
		}
		p.pins.files[path] = f
	}
	return dupPath(f)
}

// dupPath copies a held descriptor, close-on-exec (a program gets it
// through ExtraFiles, which copies it again).
func dupPath(held *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(held.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: held.Name(), Err: err}
	}
	return os.NewFile(uintptr(fd), held.Name()), nil
}

// renewPath returns path opened anew when what held holds was removed
// and path now names a new file or directory in the same place: made
// again (a build's output directory, a file replaced by a rename), not
// led elsewhere by a link put there, which resolves to another place and
// is not taken. Otherwise it returns nil, and held stays.
func renewPath(held *os.File, path string) *os.File {
	var st unix.Stat_t
	if unix.Fstat(int(held.Fd()), &st) != nil || st.Nlink > 0 {
		return nil
	}
	was, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(held.Fd())))
	if err != nil {
		return nil
	}
	f, err := openPath(path)
	if err != nil {
		return nil
	}
	now, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || now != strings.TrimSuffix(was, " (deleted)") {
		f.Close()
		return nil
	}
	return f
}

// pinExisting holds the policy's paths that exist now.
func (p Policy) pinExisting() {
	if p.Enforce == Off {
		return
	}
	for _, path := range append(append([]string{}, p.Read...), p.Write...) {
		if f, err := p.pinned(path); err == nil {
			f.Close()
		}
	}
}

// trampoline runs the program confined, as its child, and reports how it
// ended.
func trampoline(s spec) int {
	status := os.NewFile(uintptr(s.Status), "status")
	syscall.CloseOnExec(s.Status)
	for _, fd := range s.Held {
		syscall.CloseOnExec(fd) // the rules are made on them; the program has none
	}
	if !s.NS {
		// Orphans become this process's children, to be killed at the end.
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
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
	if out.cpu {
		fmt.Fprintf(status, "status %d cpu", int(out.ws))
	} else {
		fmt.Fprintf(status, "status %d", int(out.ws))
	}
	return 0
}

// outcome is how the program ended, or why it could not start; cpu is
// whether it was killed having used its CPU time limit (the kernel's
// SIGKILL at the hard limit, which a program that ignores the SIGXCPU
// before it, as Go's do, dies of).
type outcome struct {
	ws   syscall.WaitStatus
	fail string
	cpu  bool
}

// confined restricts the calling thread, locked to it, starts the program
// from it, passes sigs on to it and waits for it.
func confined(s spec, sigs <-chan os.Signal) outcome {
	// Another thread of this process may be busy in the runtime; the
	// program inherits the restrictions of the thread that forks it, and
	// dies with it (Pdeathsig).
	fd, flags, err := ruleset(s)
	if err != nil {
		return outcome{fail: err.Error()}
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
		b, err := json.Marshal(stageSpec{Path: s.Path, Argv: s.Argv, Limits: *s.Limits, Err: 3})
		if err != nil {
			return outcome{fail: "confine.limits: " + err.Error()}
		}
		if report, reportW, err = os.Pipe(); err != nil {
			return outcome{fail: "confine.limits: " + err.Error()}
		}
		defer report.Close()
		path, argv, files = selfExe, []string{StageProgram, stageMarker, string(b)}, append(files, reportW.Fd())
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
			return outcome{fail: "starting the program under confine.limits: " + reason(err)}
		}
		return outcome{fail: reason(err)}
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
			if s.Limits != nil && s.Limits.CPU > 0 && err == nil && ws.Signaled() && (ws.Signal() == syscall.SIGKILL || ws.Signal() == syscall.SIGXCPU) {
				used := ru.Utime.Sec + ru.Stime.Sec + (ru.Utime.Usec+ru.Stime.Usec)/1e6
				out.cpu = used >= s.Limits.CPU
			}
			return out
		}
	}
}

// selfExe is the stage's path: this program, wherever it is.
const selfExe = "/proc/self/exe"

// The steps whose failure the stage reports: a byte naming it, then the
// error number, in decimal.
const (
	stepCPU      = 'c'
	stepMemory   = 'm'
	stepFileSize = 'f'
	stepExec     = 'x'
)

// stageFailure reads the stage's report: "" when it became the program.
func stageFailure(b []byte, l limits) string {
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
	case stepFileSize:
		return "confine.limits.file_size: " + errno.Error()
	}
	if errno == syscall.ENOMEM && l.Memory > 0 {
		return fmt.Sprintf("%s (confine.limits.memory is %s)", errno.Error(), userfile.Size(l.Memory))
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
	// Each limit is the lower of the declared and the one inherited,
	// soft and hard: a process cannot raise a hard limit, nor can the
	// program past this one.
	set := [3]struct {
		step  byte
		res   int
		value int64
		old   unix.Rlimit
	}{{stepCPU, unix.RLIMIT_CPU, s.Limits.CPU, unix.Rlimit{}}, {stepFileSize, unix.RLIMIT_FSIZE, s.Limits.FileSize, unix.Rlimit{}}, {stepMemory, unix.RLIMIT_DATA, s.Limits.Memory, unix.Rlimit{}}}
	for i := range set {
		if set[i].value <= 0 {
			continue
		}
		if _, _, e := syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, uintptr(set[i].res), 0, uintptr(unsafe.Pointer(&set[i].old)), 0, 0); e != 0 {
			return report(set[i].step, e)
		}
		cur, max := uint64(set[i].value), uint64(set[i].value)
		if set[i].res == unix.RLIMIT_CPU {
			max++ // SIGXCPU at cur, SIGKILL a second later
		}
		set[i].old = unix.Rlimit{Cur: min(cur, set[i].old.Max), Max: min(max, set[i].old.Max)}
	}
	for i := range set { // memory last: nothing past it allocates
		if set[i].value <= 0 {
			continue
		}
		if _, _, e := syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, uintptr(set[i].res), uintptr(unsafe.Pointer(&set[i].old)), 0, 0, 0); e != 0 {
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
func ruleset(s spec) (fd int, flags uint32, err error) {
	if v, err := llsys.LandlockGetABIVersion(); err != nil || v < 1 {
		return -1, 0, nil
	}
	rules := append(existing(system, false), existing(systemWrite, true)...)
	rules = append(rules, landlock.ROFiles(s.Program))
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
				shown := p
				if k := j + i*len(s.Read); k < len(s.Shown) {
					shown = s.Shown[k]
				}
				which := "read"
				if i == 1 {
					which = "write"
				}
				return -1, 0, fmt.Errorf("confine.%s path %q: %s", which, shown, reason(err))
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

// reason is an error's text without the path os errors carry.
func reason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// describe says how a program ended from its wait status.
func describe(status int) Status {
	ws := syscall.WaitStatus(status)
	st := Status{Known: true, Success: ws.Exited() && ws.ExitStatus() == 0}
	switch {
	case ws.Exited():
		st.Text = "exit status " + strconv.Itoa(ws.ExitStatus())
	case ws.Signaled():
		st.Text = "signal: " + ws.Signal().String()
		switch ws.Signal() {
		case syscall.SIGXCPU:
			st.Passed = "cpu"
		case syscall.SIGXFSZ:
			st.Passed = "file_size"
		}
		if ws.CoreDump() {
			st.Text += " (core dumped)"
		}
	default:
		st.Text = fmt.Sprintf("wait status %d", status)
	}
	return st
}

// Support says what this kernel offers: Landlock's ABI version (0 without
// it) and whether new user, PID, IPC and network namespaces can be made.
func Support() (landlockABI int, namespaces bool) {
	probe()
	return kernel.abi, kernel.ns
}

// Seccomp says whether the trampoline installs its seccomp filter here,
// which keeps the program from the host's Unix sockets, and why not.
func Seccomp() (ok bool, why string) {
	if _, ok := filterArch(); !ok {
		return false, "agentc has no seccomp filter for " + runtime.GOARCH
	}
	probe()
	if !kernel.seccomp {
		return false, "this kernel has no seccomp filters"
	}
	return true, ""
}
