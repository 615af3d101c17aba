//go:build unix && !aix && !solaris

package flock

import (
	"errors"
	"os"
	"syscall"
)

// Supported reports whether this system has flock(2).
const Supported = true

// Try takes a lock of the given mode on f without waiting. It returns
// false, and no error, when another open file holds a lock that excludes
// it; a signal that interrupts the call is retried.
func Try(f *os.File, mode Mode) (bool, error) {
	how := syscall.LOCK_SH
	if mode == Exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		}
		return false, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
}

// Unsupported tells Try's errors on a file system that takes no flock:
// NFS without its lock service, some FUSE and SMB mounts.
func Unsupported(err error) bool {
	return errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) ||
		errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EBADF)
}
