//go:build unix && !aix

package filestore

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// abandonedAfter is how long a staging file must have been left alone
// before a sweep looks at it: its writer locks it within moments of making
// it, and the margin covers a file system whose locks do not reach every
// machine that mounts it.
const abandonedAfter = time.Hour

// holdStaging locks the staging file f for as long as it is open: a
// process that dies, however it dies, lets go of the lock, and that is how
// a sweep tells its file from one still being staged.
func holdStaging(f *os.File) error {
	ok, err := tryLock(f)
	if err == nil && !ok {
		err = errors.New("a new staging file is locked by another process")
	}
	return err
}

// released reports whether no process holds the staging file at path,
// which a sweep may then remove.
func released(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	ok, err := tryLock(f)
	return ok && err == nil
}

// tryLock takes an exclusive flock(2) on f without waiting; false when
// another open file holds one.
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
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
