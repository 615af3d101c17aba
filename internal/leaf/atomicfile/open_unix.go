//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// errNoReader is the error for a FIFO that no process reads.
var errNoReader = errors.New("it is a FIFO that no process reads")

// descriptor returns the descriptor path names as written, if it names
// one of this process's: /dev/stdout, /dev/stderr, /dev/fd/N or
// /proc/self/fd/N.
func descriptor(path string) (int, bool) {
	switch p := filepath.Clean(path); p {
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	default:
		for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
			if n, ok := strings.CutPrefix(p, dir); ok {
				fd, err := strconv.Atoi(n)
				return fd, err == nil && fd >= 0 && strconv.Itoa(fd) == n
			}
		}
	}
	return 0, false
}

// dupDescriptor returns a copy of descriptor fd, to write to and close.
func dupDescriptor(fd int, path string) (*os.File, error) {
	d, err := syscall.Dup(fd)
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(d)
	return os.NewFile(uintptr(d), path), nil
}

// openNoFollow opens path to write to it, without following a link at
// its name, creating nothing and waiting for no FIFO's reader; writes
// then wait for the reader, as a pipe's do.
func openNoFollow(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ENXIO) {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeNamedPipe != 0 {
			return nil, errNoReader
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}
