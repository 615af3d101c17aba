//go:build linux

package confine

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"agentc.dev/agentc/runtime/tool/internal/confine/internal/tramp"
)

// kernel is what this kernel offers, probed once.
var kernel struct {
	once    sync.Once
	abi     int  // Landlock's ABI version; 0 without Landlock
	ns      bool // new user, PID and network namespaces can be made
	ipc     bool // and a new IPC namespace with them (a kernel may lack IPC namespaces alone)
	seccomp bool // seccomp filters can be installed
	mounts  bool // and a new mount namespace, whose tree can be made read-only (mount_setattr)
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
		kernel.seccomp = tramp.ProbeSeccomp()
		if kernel.ns {
			kernel.mounts = probeMounts()
		}
	})
}

// probeNS starts true in new namespaces, as a tool would be started,
// with an IPC namespace or without.
func probeNS(ipc bool) bool {
	return startTrue(func(a *syscall.SysProcAttr) { setNS(a, false, ipc, false) })
}

// probeMounts says whether the trampoline can have a mount namespace of
// its own, keep the capability to mount there after it starts, and make
// its tree read-only (mount_setattr(2), Linux 5.12).
func probeMounts() bool {
	attr := unix.MountAttr{}
	if err := unix.MountSetattr(-1, "", 0, &attr); errors.Is(err, unix.ENOSYS) {
		return false
	}
	return startTrue(func(a *syscall.SysProcAttr) { setNS(a, false, kernel.ipc, true) })
}

// startTrue runs true as set says.
func startTrue(set func(*syscall.SysProcAttr)) bool {
	path, err := exec.LookPath("true")
	if err != nil {
		path = "/bin/true"
	}
	cmd := exec.Command(path)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	set(cmd.SysProcAttr)
	return cmd.Run() == nil
}

// setNS puts the process in new user, PID, IPC (with ipc), mount (with
// mounts) and (unless network) network namespaces, as the same user and
// group as this process. The IPC namespace holds System V shared memory,
// message queues and semaphores, and POSIX message queues, of its own,
// empty: none of the host's. The trampoline keeps CAP_SYS_RESOURCE in
// the user namespace, to refuse the program user namespaces of its own,
// and in the mount namespace CAP_SYS_ADMIN, to make its tree read-only
// (ambient capabilities, which a user other than root would lose at
// execve otherwise); it drops both before it starts the program.
func setNS(a *syscall.SysProcAttr, network, ipc, mounts bool) {
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID
	a.AmbientCaps = []uintptr{unix.CAP_SYS_RESOURCE}
	if ipc {
		a.Cloneflags |= syscall.CLONE_NEWIPC
	}
	if mounts {
		a.Cloneflags |= syscall.CLONE_NEWNS
		a.AmbientCaps = append(a.AmbientCaps, unix.CAP_SYS_ADMIN)
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
	if kernel.ns && !kernel.mounts {
		missing = append(missing, "this kernel cannot give the program a read-only view of the files outside confine.write (a mount namespace and mount_setattr, Linux 5.12), so it can change the mode and times of any file its user owns")
	} else if !kernel.ns {
		missing = append(missing, "without a mount namespace the program can change the mode and times of any file its user owns")
	}
	sockets := "so the program can connect to any Unix socket on the host by its path, such as an SSH agent's or the Docker daemon's"
	if !kernel.ns {
		// With them, its user's keyring is the namespace's, new.
		sockets += ", and read the keys of its user's keyring"
	}
	if _, ok := tramp.FilterArch(); !ok {
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
	_, arch := tramp.FilterArch()
	s := tramp.Spec{Shown: p.shownPaths(), Network: p.Network, NS: kernel.ns, Seccomp: arch && kernel.seccomp, Mounts: kernel.ns && kernel.mounts, Limits: p.stageLimits()}
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
				return nil, fmt.Errorf("%w: confine.%s path %q: %s", ErrStart, which, cmp.Or(p.Shown[path], path), tramp.Reason(err))
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
		setNS(cmd.SysProcAttr, p.Network, kernel.ipc, kernel.mounts)
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

// openOwn opens to be held a path agentc gave the program for this call
// alone (a file of the run, in its store; the directory for its output
// files), never a link: whoever may write the store could otherwise swap
// a link to /etc/shadow in for a blob between its check and this open,
// and the program would be let read where it leads.
func openOwn(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		unix.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: errOwnLinked}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// errOwnLinked is openOwn's error for a path that is a link.
var errOwnLinked = errors.New("it is a symbolic link, put in the place of what agentc made")

// errLinked is openDeclared's error for a path a link leads elsewhere.
var errLinked = errors.New("a symbolic link leads it elsewhere, which a program that may write there could have put; declare the path it leads to")

// openDeclared opens a declared path to be held. One written relative to
// the manifest's directory must resolve below it as written: a link on
// the way (a program that may write in a directory can put one under a
// name another tool declares) is refused, not followed. An absolute one
// is followed as it stands, as the person wrote it.
func (p Policy) openDeclared(path string) (*os.File, error) {
	f, err := openPath(path)
	rel, ok := p.pins.relative[path]
	if err != nil || !ok {
		return f, err
	}
	base, err := filepath.EvalSymlinks(p.pins.base)
	if err != nil {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	now, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || now != filepath.Join(base, rel) {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: errLinked}
	}
	return f, nil
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
		return openOwn(path)
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
		if f, err = p.openDeclared(path); err != nil {
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
	if _, ok := tramp.FilterArch(); !ok {
		return false, "agentc has no seccomp filter for " + runtime.GOARCH
	}
	probe()
	if !kernel.seccomp {
		return false, "this kernel has no seccomp filters"
	}
	return true, ""
}
