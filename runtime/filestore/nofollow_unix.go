//go:build unix

package filestore

import "syscall"

// noFollow opens a blob itself, never a link in its place, and never waits
// on a FIFO.
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
