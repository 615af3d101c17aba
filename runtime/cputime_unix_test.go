//go:build unix

package runtime_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, user and system: a
// benchmark's cost that other work on the machine does not inflate as it
// does wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
