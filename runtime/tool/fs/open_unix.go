//go:build unix

package fs

import "syscall"

// openFlags keeps an open of a FIFO from blocking until a writer comes.
const openFlags = syscall.O_NONBLOCK
