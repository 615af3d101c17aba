//go:build !unix

package atomicfile

import (
	"errors"
	"os"
)

// errNoReader is the error for a FIFO that no process reads.
var errNoReader = errors.New("it is a FIFO that no process reads")

// descriptor: this system names no descriptor by a path.
func descriptor(string) (int, bool) { return 0, false }

func dupDescriptor(int, string) (*os.File, error) { return nil, errors.ErrUnsupported }

// openNoFollow: every existing path is replaced here.
func openNoFollow(path string) (*os.File, error) {
	return nil, &os.PathError{Op: "open", Path: path, Err: errors.ErrUnsupported}
}
