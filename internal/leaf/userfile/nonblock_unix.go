//go:build unix

package userfile

import "syscall"

// nonblock opens a FIFO without waiting for its writer, so that it can be
// refused; on a regular file it changes nothing.
const nonblock = syscall.O_NONBLOCK
