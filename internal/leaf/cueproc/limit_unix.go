//go:build unix

package cueproc

import (
	"fmt"
	"syscall"
)

// limit bounds this process's CPU time (past it the kernel kills it) and
// the memory it may map (past it an allocation fails, and Go's runtime
// ends the process).
func limit() error {
	for _, l := range []struct {
		res int
		max uint64
	}{{syscall.RLIMIT_CPU, uint64(CPU.Seconds())}, {syscall.RLIMIT_AS, Memory}} {
		if err := syscall.Setrlimit(l.res, &syscall.Rlimit{Cur: l.max, Max: l.max}); err != nil {
			return fmt.Errorf("%s: setting a resource limit: %w", Verb, err)
		}
	}
	return nil
}
