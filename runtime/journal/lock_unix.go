//go:build unix && !aix && !solaris

package journal

import (
	"errors"
	"io/fs"
	"os"
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

// tryLock takes flock(2) on f, exclusive or shared, without waiting; it
// returns false when another open file holds a lock that excludes it.
func tryLock(f *os.File, shared bool) (bool, error) {
	how := syscall.LOCK_EX
	if shared {
		how = syscall.LOCK_SH
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
