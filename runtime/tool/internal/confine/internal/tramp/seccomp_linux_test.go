package tramp

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestFilter runs the seccomp filter of each architecture it is written
// for, on any machine, in a BPF interpreter: a Unix socket and a datagram
// pair are refused with EACCES, an io_uring and the keyrings with EPERM,
// another ABI's calls kill the process, and the rest passes. The
// interpreter reads words big-endian, as in a packet; the kernel gives
// seccomp_data in the machine's order, so each word is written here as
// the filter sees it.
func TestFilter(t *testing.T) {
	const (
		allow = unix.SECCOMP_RET_ALLOW
		kill  = unix.SECCOMP_RET_KILL_PROCESS
		eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		eacc  = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	)
	for _, a := range []struct {
		name                                      string
		arch, foreign                             uint32
		x32                                       bool
		socket, socketpair, ioUringSetup, connect uint32
		fchownat, fsetxattr, fchmodat, fchmod     uint32
		keyctl, addKey, requestKey                uint32
	}{
		{"amd64", unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_I386, true, 41, 53, 425, 42, 260, 190, 268, 91, 250, 248, 249},
		{"arm64", unix.AUDIT_ARCH_AARCH64, unix.AUDIT_ARCH_ARM, false, 198, 199, 425, 203, 54, 7, 53, 52, 219, 217, 218},
	} {
		raw := filter(a.arch, a.x32, archCalls[a.arch])
		prog := make([]bpf.Instruction, len(raw))
		for i, r := range raw {
			prog[i] = bpf.RawInstruction{Op: r.Code, Jt: r.Jt, Jf: r.Jf, K: r.K}.Disassemble()
		}
		vm, err := bpf.NewVM(prog)
		if err != nil {
			t.Fatalf("%s: %v", a.name, err)
		}
		for _, c := range []struct {
			what       string
			arch, nr   uint32
			arg0, arg1 uint64
			want       uint32
		}{
			{"socket(AF_UNIX, SOCK_STREAM)", a.arch, a.socket, unix.AF_UNIX, unix.SOCK_STREAM, eacc},
			{"socket(AF_UNIX, SOCK_DGRAM|SOCK_CLOEXEC)", a.arch, a.socket, unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, eacc},
			{"socket(AF_UNIX) with high bits the kernel drops", a.arch, a.socket, 1<<32 | unix.AF_UNIX, unix.SOCK_STREAM, eacc},
			{"socket(AF_INET)", a.arch, a.socket, unix.AF_INET, unix.SOCK_STREAM, allow},
			{"socket(AF_INET6, SOCK_DGRAM)", a.arch, a.socket, unix.AF_INET6, unix.SOCK_DGRAM, allow},
			{"socket(AF_NETLINK)", a.arch, a.socket, unix.AF_NETLINK, unix.SOCK_RAW, allow},
			{"socket(AF_VSOCK)", a.arch, a.socket, unix.AF_VSOCK, unix.SOCK_STREAM, eacc},
			{"socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC)", a.arch, a.socketpair, unix.AF_UNIX, unix.SOCK_STREAM | unix.SOCK_CLOEXEC, allow},
			{"socketpair(AF_UNIX, SOCK_SEQPACKET)", a.arch, a.socketpair, unix.AF_UNIX, unix.SOCK_SEQPACKET, allow},
			{"socketpair(AF_UNIX, SOCK_DGRAM)", a.arch, a.socketpair, unix.AF_UNIX, unix.SOCK_DGRAM, eacc},
			{"socketpair(AF_UNIX, SOCK_RAW), which the kernel makes a datagram pair", a.arch, a.socketpair, unix.AF_UNIX, unix.SOCK_RAW, eacc},
			{"socketpair(AF_UNIX, SOCK_RAW|SOCK_CLOEXEC)", a.arch, a.socketpair, unix.AF_UNIX, unix.SOCK_RAW | unix.SOCK_CLOEXEC, eacc},
			{"socketpair(AF_UNIX, SOCK_RDM)", a.arch, a.socketpair, unix.AF_UNIX, unix.SOCK_RDM, eacc},
			{"socketpair(AF_INET, SOCK_DGRAM), which the kernel refuses", a.arch, a.socketpair, unix.AF_INET, unix.SOCK_DGRAM, allow},
			{"socketpair(AF_UNIX, SOCK_DGRAM|SOCK_NONBLOCK|SOCK_CLOEXEC)", a.arch, a.socketpair, unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC, eacc},
			{"io_uring_setup", a.arch, a.ioUringSetup, 1, 0, eperm},
			{"fchownat", a.arch, a.fchownat, atFDCWD, 0, eperm},
			{"fsetxattr", a.arch, a.fsetxattr, 3, 0, eperm},
			{"keyctl(KEYCTL_READ)", a.arch, a.keyctl, unix.KEYCTL_READ, 1, eperm},
			{"keyctl(KEYCTL_JOIN_SESSION_KEYRING)", a.arch, a.keyctl, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, eperm},
			{"add_key", a.arch, a.addKey, 0, 0, eperm},
			{"request_key", a.arch, a.requestKey, 0, 0, eperm},
			{"fchmod(fd, 0755)", a.arch, a.fchmod, 3, 0o755, allow},
			{"fchmod(fd, 04755)", a.arch, a.fchmod, 3, 0o4755, eperm},
			{"fchmod(fd, 02755)", a.arch, a.fchmod, 3, 0o2755, eperm},
			{"fchmod(fd, 01777), sticky", a.arch, a.fchmod, 3, 0o1777, allow},
			{"connect", a.arch, a.connect, 3, 0, allow},
			{"call 0", a.arch, 0, 0, 0, allow},
			{"another ABI's call 102 (socketcall on i386)", a.foreign, 102, 1, 0, kill},
			{"another ABI's call 0", a.foreign, 0, 0, 0, kill},
		} {
			if got := run(t, vm, c.arch, c.nr, c.arg0, c.arg1); got != c.want {
				t.Errorf("%s: %s: got %#x, want %#x", a.name, c.what, got, c.want)
			}
		}
		// fchmodat's mode is its third argument.
		if got := run(t, vm, a.arch, a.fchmodat, atFDCWD, 0, 0o6755); got != eperm {
			t.Errorf("%s: fchmodat(AT_FDCWD, path, 06755): got %#x, want %#x", a.name, got, eperm)
		}
		if got := run(t, vm, a.arch, a.fchmodat, atFDCWD, 0o4000, 0o755); got != allow {
			t.Errorf("%s: fchmodat(AT_FDCWD, path, 0755), the path's pointer holding 04000: got %#x, want %#x", a.name, got, allow)
		}
		for _, nr := range archCalls[a.arch].refused {
			if got := run(t, vm, a.arch, nr, 0, 0); got != eperm {
				t.Errorf("%s: call %d: got %#x, want %#x", a.name, nr, got, eperm)
			}
		}
		x32 := uint32(allow)
		if a.x32 {
			x32 = kill
		}
		if got := run(t, vm, a.arch, x32Bit|a.socket, unix.AF_INET, 0); got != x32 {
			t.Errorf("%s: a call with the x32 bit: got %#x, want %#x", a.name, got, x32)
		}
	}
}

// atFDCWD is AT_FDCWD as a system call's argument carries it.
const atFDCWD = uint64(1<<64 - 100)

// run runs vm on the seccomp_data of a call: nr, arch, the instruction
// pointer and six arguments.
func run(t *testing.T, vm *bpf.VM, arch, nr uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[dataNR:], nr)
	binary.BigEndian.PutUint32(data[dataArch:], arch)
	for i, a := range args {
		// The low 32 bits, where the filter reads them on a
		// little-endian machine.
		binary.BigEndian.PutUint32(data[dataArg0+8*i:], uint32(a))
		binary.BigEndian.PutUint32(data[dataArg0+8*i+4:], uint32(a>>32))
	}
	got, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(got)
}
