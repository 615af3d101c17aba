package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The programs nolandlock, nouserns and noseccomp run a command on a
// kernel that really refuses it Landlock, user namespaces, or seccomp
// filters: a seccomp filter, which every process the command starts
// inherits, makes the kernel answer the system calls as a kernel without
// them does. So the scripts test agentc's degraded confinement through the
// real binary, with no knob in agentc that pretends. They stack:
// nolandlock nouserns agentc run ... lacks both; noseccomp, after which no
// filter can be installed, comes last.

// nolandlock is the program nolandlock CMD ARGS...: Landlock's system
// calls fail with ENOSYS, as on a kernel built without it.
func nolandlock() { os.Exit(refuseThen(refuseLandlock)) }

// nouserns is the program nouserns CMD ARGS...: clone and unshare asking
// for a new user namespace fail with EPERM, as where
// kernel.unprivileged_userns_clone is 0 or an AppArmor policy refuses them.
func nouserns() { os.Exit(refuseThen(refuseUserNS)) }

// noipcns is the program noipcns CMD ARGS...: clone and unshare asking
// for a new IPC namespace fail with EINVAL, as on a kernel built without
// IPC namespaces (CONFIG_IPC_NS off), which has the other namespaces.
func noipcns() { os.Exit(refuseThen(refuseIPCNS)) }

// noseccomp is the program noseccomp CMD ARGS...: seccomp(2) fails with
// ENOSYS and prctl's PR_SET_SECCOMP and PR_GET_SECCOMP with EINVAL, as on a
// kernel built without seccomp.
func noseccomp() { os.Exit(refuseThen(refuseSeccomp)) }

// nomountsetattr is the program nomountsetattr CMD ARGS...:
// mount_setattr(2) fails with ENOSYS, as on a kernel before 5.12, which has
// Landlock and namespaces but cannot make a mount tree read-only.
func nomountsetattr() { os.Exit(refuseThen(refuseMountSetattr)) }

type refusal int

const (
	refuseLandlock refusal = iota
	refuseUserNS
	refuseSeccomp
	refuseIPCNS
	refuseMountSetattr
)

// auditArch is the architecture seccomp reports for this program's own
// system calls: the numbers the filter names are this architecture's.
func auditArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	}
	return 0, false
}

// refuseCondition answers [refuse]: this machine can run a command under
// the filters, saying on standard error why scripts that need them skip.
func refuseCondition() bool {
	if _, ok := auditArch(); !ok {
		fmt.Fprintf(os.Stderr, "SKIPPED: scripts that refuse the kernel's features: the seccomp filter knows amd64 and arm64, not %s\n", runtime.GOARCH)
		return false
	}
	return true
}

// Offsets in struct seccomp_data, the filter's input.
const (
	dataNR   = 0
	dataArch = 4
	dataArg0 = 16 // the low 32 bits, on these little-endian machines
)

// x32Bit marks the x32 ABI's system call numbers on amd64, which carry
// AUDIT_ARCH_X86_64 too: the filter refuses them all rather than map
// their numbers.
const x32Bit = 0x40000000

// filter is the seccomp program for r.
func filter(r refusal, arch uint32) ([]bpf.RawInstruction, error) {
	errno := func(e syscall.Errno) bpf.Instruction {
		return bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(e)}
	}
	prog := []bpf.Instruction{
		// Another architecture's numbers mean other calls: none passes.
		bpf.LoadAbsolute{Off: dataArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: arch, SkipTrue: 1},
		errno(unix.ENOSYS),
		bpf.LoadAbsolute{Off: dataNR, Size: 4},
	}
	if arch == unix.AUDIT_ARCH_X86_64 {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit, SkipFalse: 1},
			errno(unix.ENOSYS))
	}
	// never: the call fails whatever its arguments.
	never := func(nr uintptr, e syscall.Errno) {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(nr), SkipFalse: 1},
			errno(e))
	}
	// when: the call fails when its first argument meets cond and val.
	when := func(nr uintptr, cond bpf.JumpTest, val uint32, e syscall.Errno) {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(nr), SkipFalse: 4},
			bpf.LoadAbsolute{Off: dataArg0, Size: 4},
			bpf.JumpIf{Cond: cond, Val: val, SkipFalse: 1},
			errno(e),
			bpf.LoadAbsolute{Off: dataNR, Size: 4})
	}
	// newUser: the call fails when its first argument, the flags, asks
	// for a new user namespace.
	newUser := func(nr uintptr) { when(nr, bpf.JumpBitsSet, unix.CLONE_NEWUSER, unix.EPERM) }
	switch r {
	case refuseLandlock:
		never(unix.SYS_LANDLOCK_CREATE_RULESET, unix.ENOSYS)
		never(unix.SYS_LANDLOCK_ADD_RULE, unix.ENOSYS)
		never(unix.SYS_LANDLOCK_RESTRICT_SELF, unix.ENOSYS)
	case refuseUserNS:
		// clone3's flags are behind a pointer, which seccomp cannot
		// read: as on kernels before 5.3, it is not there, and callers
		// (glibc, Go) fall back to clone, whose flags it can.
		never(unix.SYS_CLONE3, unix.ENOSYS)
		newUser(unix.SYS_CLONE)
		newUser(unix.SYS_UNSHARE)
	case refuseIPCNS:
		never(unix.SYS_CLONE3, unix.ENOSYS) // its flags are behind a pointer, as for refuseUserNS
		when(unix.SYS_CLONE, bpf.JumpBitsSet, unix.CLONE_NEWIPC, unix.EINVAL)
		when(unix.SYS_UNSHARE, bpf.JumpBitsSet, unix.CLONE_NEWIPC, unix.EINVAL)
	case refuseMountSetattr:
		never(unix.SYS_MOUNT_SETATTR, unix.ENOSYS)
	case refuseSeccomp:
		never(unix.SYS_SECCOMP, unix.ENOSYS)
		when(unix.SYS_PRCTL, bpf.JumpEqual, unix.PR_SET_SECCOMP, unix.EINVAL)
		when(unix.SYS_PRCTL, bpf.JumpEqual, unix.PR_GET_SECCOMP, unix.EINVAL)
	}
	prog = append(prog, bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	return bpf.Assemble(prog)
}

// refuseThen installs r's filter on every thread of this process, checks
// that the kernel now refuses, and replaces this process with the command
// its arguments name.
func refuseThen(r refusal) int {
	if len(os.Args) < 2 {
		fmt.Fprintf(os.Stderr, "usage: %s CMD [ARG...]\n", os.Args[0])
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], err)
		return 125
	}
	arch, ok := auditArch()
	if !ok {
		return fail(fmt.Errorf("no seccomp filter for %s", runtime.GOARCH))
	}
	raw, err := filter(r, arch)
	if err != nil {
		return fail(err)
	}
	insns := make([]unix.SockFilter, len(raw))
	for i, in := range raw {
		insns[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(insns)), Filter: &insns[0]}

	// no_new_privs lets an unprivileged process install a filter; set on
	// this thread, TSYNC gives every thread both.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("no_new_privs: %v", err))
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fail(fmt.Errorf("installing the seccomp filter: %v", e))
	}
	if err := refused(r); err != nil {
		return fail(err)
	}

	path, err := exec.LookPath(os.Args[1])
	if err != nil {
		return fail(err)
	}
	return fail(syscall.Exec(path, os.Args[1:], os.Environ()))
}

// refused checks that the kernel refuses what r names, as agentc will ask
// for it: a filter that did not take would let a script pass untested.
func refused(r refusal) error {
	switch r {
	case refuseLandlock:
		_, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
		if e != unix.ENOSYS {
			return fmt.Errorf("Landlock's version query gave %v, not ENOSYS", e)
		}
	case refuseUserNS:
		truePath, err := exec.LookPath("true")
		if err != nil {
			return err
		}
		for _, attr := range []*syscall.SysProcAttr{
			{Cloneflags: syscall.CLONE_NEWUSER},
			{Unshareflags: syscall.CLONE_NEWUSER},
		} {
			cmd := exec.Command(truePath)
			cmd.SysProcAttr = attr
			if err := cmd.Run(); !errors.Is(err, syscall.EPERM) {
				return fmt.Errorf("a new user namespace (%+v) gave %v, not EPERM", *attr, err)
			}
		}
	case refuseIPCNS:
		truePath, err := exec.LookPath("true")
		if err != nil {
			return err
		}
		cmd := exec.Command(truePath)
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWIPC}
		if err := cmd.Run(); !errors.Is(err, syscall.EINVAL) {
			return fmt.Errorf("a new IPC namespace gave %v, not EINVAL", err)
		}
	case refuseMountSetattr:
		if _, _, e := unix.Syscall6(unix.SYS_MOUNT_SETATTR, ^uintptr(0), 0, 0, 0, 0, 0); e != unix.ENOSYS {
			return fmt.Errorf("mount_setattr(2) gave %v, not ENOSYS", e)
		}
	case refuseSeccomp:
		// As agentc asks whether it can install a filter: from an
		// address the kernel cannot read.
		if _, _, e := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, 0); e != unix.EINVAL {
			return fmt.Errorf("prctl(PR_SET_SECCOMP) gave %v, not EINVAL", e)
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, 0); e != unix.ENOSYS {
			return fmt.Errorf("seccomp(2) gave %v, not ENOSYS", e)
		}
	}
	return nil
}
