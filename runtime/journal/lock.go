package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"

	"agentc.dev/agentc/internal/leaf/flock"
	"agentc.dev/agentc/internal/leaf/userfile"
)

// Lock is the right to write a journal, held for a run's life: an
// advisory lock, exclusive, on a file beside the journal, FILE.lock,
// which holds the holder's process id. Create and Resume take it, and a
// Writer they return holds it until Close, so a journal is written only
// under its lock; a second writer fails at once with a *LockedError
// instead of waiting.
//
// The lock is on a file of its own, not on the journal, so that it covers
// the path whatever file ends up there: a journal is created by renaming a
// new file into place, and the decision to create one or resume the one
// there is made under the lock. The lock file is removed when the lock is
// released; one left by a process that died (kill -9) holds no lock, and
// the next holder takes it over.
//
// The lock is on the journal's identity, not on the name it was given: the
// path is resolved (symbolic links, "..", relative or absolute) before its
// lock file is named, and the journal there, when there is one, is itself
// locked (flock on its inode), so a hard link or a bind mount of it meets
// the same lock. The lock file is opened without following a link, and
// one that is a link, a FIFO or a device is refused, never written
// through.
//
// On systems without flock(2) (Windows, AIX, Solaris), the lock file is written
// and removed, but it excludes nothing.
type Lock struct {
	path string // the journal's, as given
	real string // the journal's, resolved
	mu   sync.Mutex
	f    *os.File // nil once released
	jf   *os.File // the journal there when the lock was taken, locked; or nil
}

// LockedError is a journal another process is recording.
type LockedError struct {
	Path string // the journal's
	PID  int    // the holder's process id; 0 when not known
}

func (e *LockedError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("journal %s is being recorded by %s", e.Path, who)
}

// LockFile is the name of the lock file of the journal at path: beside
// the file path names once its links are resolved.
func LockFile(path string) string { return userfile.Resolve(path) + ".lock" }

// Acquire takes the lock of the journal at path, which need not exist. It
// fails at once with a *LockedError while another process holds it.
func Acquire(path string) (*Lock, error) {
	real := userfile.Resolve(path)
	name := real + ".lock"
	for range 100 {
		f, err := openLockFile(name, lockName(path, real), os.O_RDWR|os.O_CREATE)
		if err != nil {
			return nil, fmt.Errorf("journal: locking %s: %w", path, err)
		}
		held, err := flock.Try(f, flock.Exclusive)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("journal: locking %s: %w", path, err)
		}
		if !held {
			pid := readPID(f)
			f.Close()
			return nil, &LockedError{Path: path, PID: pid}
		}
		// The holder before us may have removed the file as it released
		// it, and a third process locked a new one: ours must be the one
		// at the name.
		if fi, err := f.Stat(); err == nil {
			if now, err := os.Lstat(name); err == nil && os.SameFile(fi, now) {
				if err := isLockFile(f, fi); err != nil {
					f.Close()
					return nil, fmt.Errorf("journal: locking %s: its lock file %s %v", path, lockName(path, real), err)
				}
				pid := []byte(stamp + strconv.Itoa(os.Getpid()) + "\n")
				if err = f.Truncate(0); err == nil {
					_, err = f.WriteAt(pid, 0)
				}
				if err != nil {
					f.Close()
					return nil, fmt.Errorf("journal: locking %s: %w", path, err)
				}
				l := &Lock{path: path, real: real, f: f}
				if l.jf, err = lockJournal(path, real, false); errors.Is(err, fs.ErrNotExist) {
					l.jf = nil
				} else if err != nil {
					l.Release()
					return nil, err
				}
				return l, nil
			}
		}
		f.Close()
	}
	return nil, fmt.Errorf("journal: locking %s: its lock file %s keeps being replaced", path, name)
}

// openLockFile opens a lock file without following a link, and refuses
// one that is not a regular file of one name: writing it must never
// write another file.
func openLockFile(name, shown string, flag int) (*os.File, error) {
	f, err := os.OpenFile(name, flag|noFollow|nonBlock, 0o644)
	if err != nil {
		if fi, lerr := os.Lstat(name); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("its lock file %s is a symbolic link, which agentc does not follow: remove it", shown)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("its lock file %s is not a regular file (%v): remove it", shown, fi.Mode().Type())
	}
	if links(fi) > 1 {
		f.Close()
		return nil, fmt.Errorf("its lock file %s has another name (a hard link), which agentc would write through: remove it", shown)
	}
	return f, nil
}

// stamp begins what a lock file holds, before its holder's process id,
// so that a lock file is known for agentc's: other programs keep a
// process id in a NAME.lock too, unlocked (shadow-utils' passwd.lock).
const stamp = "agentc "

// isLockFile says why f, a regular file that fi describes, found where
// a lock file goes and not locked, is not a lock file a run left, which
// is taken over: one holds agentc's stamp and a process id, which holds
// no lock, so its run ended; or, as agentc wrote before it stamped them,
// a process id no process has; or nothing (its writer died before it
// wrote). A journal named through a link leads its lock file where the
// link leads: a file there with other content (Cargo.lock beside a
// journal named through a link to Cargo), or with the id of a process
// that is running (passwd.lock beside a link to passwd), is someone
// else's, and taking it over would empty and remove it.
func isLockFile(f *os.File, fi os.FileInfo) error {
	switch {
	case fi.Size() == 0:
		return nil
	case fi.Size() > 32:
		return fmt.Errorf("holds %d bytes, more than a process id: %s; remove it, or record elsewhere", fi.Size(), notTaken)
	}
	b := make([]byte, fi.Size())
	n, _ := f.ReadAt(b, 0)
	if bytes.HasPrefix(b[:n], []byte(stamp)) && readPID(f) > 0 {
		return nil
	}
	switch pid := readPID(f); {
	case pid == 0:
		return fmt.Errorf("holds %q, not a process id: %s; remove it, or record elsewhere", b[:n], notTaken)
	case running(pid):
		return fmt.Errorf("holds the id of process %d, which is running, without agentc's stamp: it is that process's lock, and %s; record elsewhere", pid, notTaken)
	}
	return nil
}

const notTaken = "agentc writes no file it did not make, so it is not taken over"

// lockName is the lock file's name for messages: beside the name the
// journal was given, unless that is a link to a journal elsewhere.
func lockName(path, real string) string {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return real + ".lock"
	}
	return path + ".lock"
}

// lockJournal locks the journal file at real, so that every name of it
// (a hard link, a bind mount) meets the lock, and returns it. Its errors
// name path.
func lockJournal(path, real string, shared bool) (*os.File, error) {
	jf, err := userfile.Open(real)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Path = path
		}
		var nr *userfile.NotRegularError
		if errors.As(err, &nr) {
			nr.Path = path
		}
		return nil, fmt.Errorf("journal: %w", err)
	}
	mode := flock.Exclusive
	if shared {
		mode = flock.Shared
	}
	held, err := flock.Try(jf, mode)
	if err != nil {
		jf.Close()
		return nil, fmt.Errorf("journal: locking %s: %w", path, err)
	}
	if !held {
		jf.Close()
		return nil, &LockedError{Path: path}
	}
	return jf, nil
}

// readPID reads the process id a lock file holds, after agentc's stamp
// or without it (as agentc wrote it before); 0 for none.
func readPID(f *os.File) int {
	b := make([]byte, 33)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(b[:n]), stamp)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Path returns the path of the journal the lock is for.
func (l *Lock) Path() string { return l.path }

var errReleased = errors.New("journal: the lock is released")

// Create creates or replaces the locked journal, as the function Create
// does. The Writer holds the lock from then on, and releases it on Close.
func (l *Lock) Create(h Header) (*Writer, error) { return create(l, h, true) }

// Resume reopens the locked journal, as the function Resume does. The
// Writer holds the lock from then on, and releases it on Close.
func (l *Lock) Resume() (*Journal, *Writer, error) {
	if !l.held() {
		return nil, nil, errReleased
	}
	return resume(l)
}

func (l *Lock) held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f != nil
}

// Release removes the lock file and releases the lock. It may be called
// more than once.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	// Removed while held: a process that opened it before waits on a
	// file no longer at the name, sees so once it holds it, and tries
	// again. Only the file locked is removed: another put at its name
	// is left.
	name := l.real + ".lock"
	fi, serr := l.f.Stat()
	now, err := os.Lstat(name)
	if err == nil && serr == nil && os.SameFile(fi, now) {
		err = os.Remove(name)
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if l.jf != nil {
		l.jf.Close()
	}
	l.f, l.jf = nil, nil
	if err != nil {
		return fmt.Errorf("journal: releasing the lock of %s: %w", l.path, err)
	}
	return nil
}

// OpenShared reads a journal as Open does, under its lock taken shared,
// so it does not read a journal while a run records it: then it fails at
// once with a *LockedError. A journal without a lock file is read without
// one, and nothing is created: a journal may be read where nothing can be
// written.
func OpenShared(path string) (*Journal, error) {
	real := userfile.Resolve(path)
	f, err := openLockFile(real+".lock", lockName(path, real), os.O_RDONLY)
	switch {
	case err == nil:
		defer f.Close()
		held, err := flock.Try(f, flock.Shared)
		if err != nil {
			return nil, fmt.Errorf("journal: locking %s: %w", path, err)
		}
		if !held {
			return nil, &LockedError{Path: path, PID: readPID(f)}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("journal: locking %s: %w", path, err)
	}
	jf, err := lockJournal(path, real, true)
	if err != nil {
		return nil, err
	}
	defer jf.Close()
	return read(jf, path)
}
