//go:build linux

package tramp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter keeps the program from the host's Unix sockets,
// which neither the network namespace (it hides abstract sockets only)
// nor Landlock (connecting to a socket by its path is no file access it
// rules) keeps it from:
//
//   - socket(2) with AF_UNIX fails with EACCES, as a connect the system
//     refuses does, and so does one with AF_VSOCK, which reaches the
//     hypervisor's host and its other machines whatever the network
//     namespace (vsock has none on most kernels);
//   - socketpair(2) with AF_UNIX fails with EACCES unless it is of
//     SOCK_STREAM or SOCK_SEQPACKET: a datagram socket, even one of a
//     pair, can send to any path (sendto(2)), or be connected again to
//     one, and the kernel makes SOCK_RAW a datagram socket. A stream or
//     seqpacket pair, which programs use as a pipe, cannot, and works;
//   - io_uring_setup(2) fails with EPERM, as where io_uring is disabled:
//     an io_uring makes sockets without socket(2);
//   - changing a file's owner or extended attributes fails with EPERM,
//     and so does a mode with the set-user-ID or set-group-ID bit:
//     Landlock rules a file's contents, not its metadata, so a program
//     could otherwise do either to any file its user owns (see calls);
//   - keyctl(2), add_key(2) and request_key(2) fail with EPERM: neither
//     Landlock nor the namespaces keep a program from the kernel's
//     keyrings, where its user's keyring and the session keyring it
//     inherits hold Kerberos tickets and passwords (cifscreds).
//
// It is installed on the trampoline's thread that starts the program,
// without TSYNC, after no_new_privs: that thread and what it starts have
// it, as they have the Landlock ruleset.
//
// A system call of another ABI than the program's native one (i386 or
// x32 on amd64, 32-bit ARM on arm64) kills the process: its numbers are
// other calls, and i386's socketcall(2), which makes sockets too, hides
// its arguments behind a pointer the filter cannot read. A 32-bit program
// therefore cannot run confined; refusing each such call with an error
// instead would let it run on, failing at each step in ways that name no
// cause, where SIGSYS ("bad system call") does.

// Offsets in struct seccomp_data, the filter's input: the call's number,
// its architecture, and the low 32 bits of its arguments (the machines
// the filter knows are little-endian).
const (
	dataNR   = 0
	dataArch = 4
	dataArg0 = 16
	dataArg1 = 24
)

// x32Bit marks the system call numbers of the x32 ABI on amd64, which
// carry the architecture AUDIT_ARCH_X86_64 too.
const x32Bit = 0x40000000

// sockTypeMask keeps, of socket(2)'s type, the type without the flags
// (SOCK_NONBLOCK, SOCK_CLOEXEC).
const sockTypeMask = 0xf

// FilterArch is the architecture seccomp reports for the native calls of
// this program, and of the programs it starts: the numbers the filter
// names are this architecture's. ok is false where the filter is not
// written for it.
func FilterArch() (arch uint32, ok bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	}
	return 0, false
}

// calls are an architecture's numbers of the system calls the filter
// names.
type calls struct {
	socket, socketpair, ioUringSetup uint32
	// refused always fail with EPERM: changing a file's owner or its
	// extended attributes, which Landlock does not rule, so that a
	// program could do it to any file its user owns, anywhere (as root,
	// any file of the system's); and reaching the kernel's keyrings,
	// which nothing else rules.
	refused []uint32
	// setID fail with EPERM when the mode they set (their argument arg)
	// has the set-user-ID or set-group-ID bit: changing a file's mode,
	// which Landlock does not rule either, would let a program run as
	// root make a set-user-ID root program of any of the system's.
	setID []modeCall
}

// modeCall is a call that sets a file's mode, and which of its arguments
// the mode is.
type modeCall struct {
	nr  uint32
	arg uint32
}

// archCalls are the numbers of each architecture the filter is written
// for (linux/arch's syscall tables; seccomp_*_test.go holds them to
// golang.org/x/sys/unix's on each).
var archCalls = map[uint32]calls{
	unix.AUDIT_ARCH_X86_64: {
		socket: 41, socketpair: 53, ioUringSetup: 425,
		// chown, fchown, lchown, fchownat; setxattr, lsetxattr,
		// fsetxattr, removexattr, lremovexattr, fremovexattr, setxattrat,
		// removexattrat; add_key, request_key, keyctl.
		refused: []uint32{92, 93, 94, 260, 188, 189, 190, 197, 198, 199, 463, 466, 248, 249, 250},
		// chmod, fchmod, fchmodat, fchmodat2.
		setID: []modeCall{{90, 1}, {91, 1}, {268, 2}, {452, 2}},
	},
	unix.AUDIT_ARCH_AARCH64: {
		socket: 198, socketpair: 199, ioUringSetup: 425,
		// fchown, fchownat; setxattr, lsetxattr, fsetxattr, removexattr,
		// lremovexattr, fremovexattr, setxattrat, removexattrat; add_key,
		// request_key, keyctl.
		refused: []uint32{55, 54, 5, 6, 7, 14, 15, 16, 463, 466, 217, 218, 219},
		// fchmod, fchmodat, fchmodat2.
		setID: []modeCall{{52, 1}, {53, 2}, {452, 2}},
	},
}

// setIDBits are S_ISUID and S_ISGID.
const setIDBits = 0o6000

// filter is the seccomp program for arch, whose numbers are c; x32 is
// whether the x32 ABI shares its architecture (amd64).
func filter(arch uint32, x32 bool, c calls) []unix.SockFilter {
	load := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	// jeq jumps jt instructions ahead when A == k, jf when not.
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	ret := func(v uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v} }
	allow := ret(unix.SECCOMP_RET_ALLOW)
	kill := ret(unix.SECCOMP_RET_KILL_PROCESS)
	fail := func(e unix.Errno) unix.SockFilter { return ret(unix.SECCOMP_RET_ERRNO | uint32(e)) }

	prog := []unix.SockFilter{
		load(dataArch),
		jeq(arch, 1, 0),
		kill,
		load(dataNR),
	}
	if x32 {
		prog = append(prog,
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, K: x32Bit, Jt: 0, Jf: 1},
			kill)
	}
	prog = append(prog,
		jeq(c.ioUringSetup, 0, 1),
		fail(unix.EPERM),
	)
	for _, nr := range c.refused {
		prog = append(prog, jeq(nr, 0, 1), fail(unix.EPERM))
	}
	for _, m := range c.setID {
		prog = append(prog,
			jeq(m.nr, 0, 4),
			load(dataArg0+8*m.arg),
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, K: setIDBits, Jt: 0, Jf: 1},
			fail(unix.EPERM),
			allow,
		)
	}
	prog = append(prog,
		jeq(c.socket, 0, 5),
		load(dataArg0),
		jeq(unix.AF_UNIX, 2, 0),
		jeq(unix.AF_VSOCK, 1, 0),
		allow,
		fail(unix.EACCES),

		jeq(c.socketpair, 0, 7),
		load(dataArg0),
		jeq(unix.AF_UNIX, 0, 5),
		load(dataArg1),
		unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: sockTypeMask},
		jeq(unix.SOCK_STREAM, 2, 0),
		jeq(unix.SOCK_SEQPACKET, 1, 0),
		fail(unix.EACCES),

		allow,
	)
	return prog
}

// nativeFilter is the filter for this architecture, or nil where there is
// none.
func nativeFilter() []unix.SockFilter {
	arch, ok := FilterArch()
	if !ok {
		return nil
	}
	return filter(arch, arch == unix.AUDIT_ARCH_X86_64, archCalls[arch])
}

// ProbeSeccomp says whether this kernel installs seccomp filters: asked
// to install one from an address it cannot read, a kernel that has them
// fails with EFAULT, before it looks at anything else; one without them
// fails with EINVAL (or ENOSYS). Nothing is installed.
func ProbeSeccomp() bool {
	_, _, e := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, 0)
	return e == unix.EFAULT
}

// installFilter installs the filter on the calling thread, which has
// no_new_privs.
func installFilter() error {
	prog := nativeFilter()
	if prog == nil {
		return fmt.Errorf("no filter for %s", runtime.GOARCH)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
	runtime.KeepAlive(prog)
	return err
}
