package journal

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
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
// On systems without flock(2) (Windows, AIX), the lock file is written
// and removed, but it excludes nothing.
type Lock struct {
	path string // the journal's
	mu   sync.Mutex
	f    *os.File // nil once released
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

// LockFile is the name of the lock file of the journal at path.
func LockFile(path string) string { return path + ".lock" }

// Acquire takes the lock of the journal at path, which need not exist. It
// fails at once with a *LockedError while another process holds it.
func Acquire(path string) (*Lock, error) {
	name := LockFile(path)
	for range 100 {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("journal: locking %s: %w", path, err)
		}
		held, err := tryLock(f, false)
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
			if now, err := os.Stat(name); err == nil && os.SameFile(fi, now) {
				pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
				if err = f.Truncate(0); err == nil {
					_, err = f.WriteAt(pid, 0)
				}
				if err != nil {
					f.Close()
					return nil, fmt.Errorf("journal: locking %s: %w", path, err)
				}
				return &Lock{path: path, f: f}, nil
			}
		}
		f.Close()
	}
	return nil, fmt.Errorf("journal: locking %s: its lock file %s keeps being replaced", path, name)
}

func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
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
	// again.
	err := os.Remove(LockFile(l.path))
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
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
	f, err := os.Open(LockFile(path))
	if err == nil {
		defer f.Close()
		held, err := tryLock(f, true)
		if err != nil {
			return nil, fmt.Errorf("journal: locking %s: %w", path, err)
		}
		if !held {
			return nil, &LockedError{Path: path, PID: readPID(f)}
		}
	}
	return Open(path)
}
