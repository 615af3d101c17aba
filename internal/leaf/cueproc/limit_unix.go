//go:build unix

package cueproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// limit bounds this process's CPU time (past it the kernel kills it) and
// the memory it may map beyond what it holds now (past it an allocation
// fails, and Go's runtime ends the process). A limit the process already
// has that is tighter (a user's ulimit) is kept: a process may lower its
// hard limits, never raise them.
func limit() error {
	for _, l := range []struct {
		res int
		max uint64
	}{{syscall.RLIMIT_CPU, uint64(CPU.Seconds())}, {rlimitMemory, mapped() + Memory}} {
		var r syscall.Rlimit
		if err := syscall.Getrlimit(l.res, &r); err != nil {
			return fmt.Errorf("%s: reading a resource limit: %w", Verb, err)
		}
		lower(&r.Cur, l.max)
		lower(&r.Max, l.max)
		if err := syscall.Setrlimit(l.res, &r); err != nil {
			return fmt.Errorf("%s: setting a resource limit: %w", Verb, err)
		}
	}
	return nil
}

// lower sets *v to max where it is larger (or unlimited). A limit is
// unsigned on most systems and signed on some (FreeBSD's), their
// "unlimited" the largest value either way.
func lower[T int64 | uint64](v *T, max uint64) {
	if uint64(*v) > max || *v < 0 {
		*v = T(max)
	}
}

// mapped is the address space this process holds: its program, the
// regions Go's runtime reserves as it starts and, in a build with the race
// detector, the detector's own; 0 where the system does not say. A program
// the size of agentc holds over 1.5 GiB before it evaluates anything, so a
// limit on the whole would leave an evaluation a fraction of Memory, a
// fraction that shrinks as the program grows.
func mapped() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 0
	}
	pages, err := strconv.ParseUint(fields[0], 10, 64)
	if err != nil || pages > 1<<40 {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}
