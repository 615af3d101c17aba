//go:build !unix

package atomicfile

import "os"

// openInPlace opens path to append to it.
func openInPlace(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
}
