//go:build unix && !aix && !solaris

package filestore

import (
	"errors"
	"os"
	"time"

	"agentc.dev/agentc/internal/leaf/flock"
)

// holdsOpen: a staging file stays open, and so locked, from Stage to
// Commit or Discard.
const holdsOpen = true

// abandonedAfter is how long a staging file must have lain untouched
// before a sweep looks at it: its writer locks it within moments of making
// it, and the margin covers a file system whose locks do not reach every
// machine that mounts it. Where the file system takes no lock at all, age
// alone decides, after unlockableAfter.
const (
	abandonedAfter  = time.Hour
	unlockableAfter = 24 * time.Hour
)

// holdStaging locks the staging file f for as long as it is open: a
// process that dies, however it dies, lets go of the lock, and that is how
// a sweep tells its file from one still being staged. On a file system
// that takes no lock the file is staged unlocked, as before there were
// locks, and only age tells it apart.
func holdStaging(f *os.File) error {
	ok, err := flock.Try(f, flock.Exclusive)
	switch {
	case err != nil && flock.Unsupported(err):
		return nil
	case err != nil:
		return err
	case !ok:
		return errors.New("a new staging file is locked by another process")
	}
	return nil
}

// sweepOne removes the staging file name in root when it was left
// behind: a regular file (never a link, nor a directory), untouched for
// abandonedAfter, that no process holds. It decides on the open file and
// removes the name only while that name is still the file it looked at.
func sweepOne(root *os.Root, name string, now time.Time) {
	f, err := root.OpenFile(name, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	age := now.Sub(fi.ModTime())
	if age < abandonedAfter {
		return
	}
	// A shared lock is refused while the writer holds its exclusive one,
	// and needs only a file open for reading (a file system that keeps
	// flock as POSIX locks, as NFS does, takes an exclusive one only on a
	// file open for writing).
	free, err := flock.Try(f, flock.Shared)
	switch {
	case err != nil && flock.Unsupported(err):
		if age < unlockableAfter {
			return
		}
	case err != nil || !free:
		return
	}
	if li, err := root.Lstat(name); err != nil || !os.SameFile(fi, li) {
		return
	}
	root.Remove(name)
}
