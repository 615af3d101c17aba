//go:build !unix

package a2a

import "os"

// mkfifo makes what stands for a FIFO where there are none: a directory,
// which is no regular file either.
func mkfifo(path string) error { return os.Mkdir(path, 0o700) }
