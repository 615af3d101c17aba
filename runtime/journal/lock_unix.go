//go:build unix

package journal

import (
	"errors"
	"io/fs"
	"syscall"
)

// noFollow and nonBlock open a lock file without following a link at its
// name, and without waiting on a FIFO there (which is then refused).
const (
	noFollow = syscall.O_NOFOLLOW
	nonBlock = syscall.O_NONBLOCK
)

// links is the number of names a file has.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// running says whether a process with the id pid is there: one that
// cannot be signalled (another user's) is.
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
