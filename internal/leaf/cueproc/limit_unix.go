//go:build unix

package cueproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// limit bounds this process's CPU time (past it the kernel kills it) and,
// where the system says what the process holds (Linux), the address space
// it may map beyond that (past it an allocation fails, and Go's runtime
// ends the process). A tighter hard limit the process already has (a
// user's ulimit) is kept: a process may lower its hard limits, never raise
// them. Each soft limit is set to its hard one: Go ignores the signal a
// soft CPU limit sends.
func limit() error {
	type bound struct {
		res int
		max uint64
	}
	limits := []bound{{syscall.RLIMIT_CPU, uint64(CPU.Seconds())}}
	if held, ok := mapped(); ok {
		limits = append(limits, bound{rlimitMemory, held + Memory})
	}
	for _, l := range limits {
		var r syscall.Rlimit
		if err := syscall.Getrlimit(l.res, &r); err != nil {
			return fmt.Errorf("%s: reading a resource limit: %w", Verb, err)
		}
		lower(&r.Max, l.max)
		r.Cur = r.Max
		if err := syscall.Setrlimit(l.res, &r); err != nil {
			return fmt.Errorf("%s: setting a resource limit: %w", Verb, err)
		}
	}
	return nil
}

// memoryBounded says whether a child on this system has a memory limit.
func memoryBounded() bool {
	_, ok := mapped()
	return ok
}

// lower sets *v to max where it is larger (or unlimited). A limit is
// unsigned on most systems and signed on some (FreeBSD's), their
// "unlimited" the largest value either way.
func lower[T int64 | uint64](v *T, max uint64) {
	if *v < 0 || uint64(*v) > max {
		*v = T(max)
	}
}

// mapped is the address space this process holds: its program, the
// regions Go's runtime reserves as it starts and, in a build with the race
// detector, the detector's own. A program the size of agentc holds over
// 1.5 GiB before it evaluates anything, so a limit on the whole would
// leave an evaluation a fraction of Memory, a fraction that shrinks as the
// program grows. It reads Linux's /proc; ok is false where there is none,
// and no memory limit is set there, rather than one that could leave an
// evaluation nothing (or, on macOS, that the system refuses below what the
// process already maps).
func mapped() (n uint64, ok bool) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 0, false
	}
	pages, err := strconv.ParseUint(fields[0], 10, 64)
	if err != nil || pages == 0 || pages > 1<<40 {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}
