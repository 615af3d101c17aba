//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// errNoReader is the error for a FIFO that no process reads.
var errNoReader = errors.New("it is a FIFO that no process reads")

// openInPlace opens path to append to it, without waiting for a FIFO's
// reader: a FIFO no process reads is refused. Writes then wait for the
// reader, as a pipe's do.
func openInPlace(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ENXIO) {
		return nil, errNoReader
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
