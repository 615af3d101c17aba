//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package runcmd

import (
	"os"

	"golang.org/x/sys/unix"
)

// discardTyped drops what was typed on the terminal f and not yet read
// (tcflush(TCIFLUSH), which these systems spell TIOCFLUSH of FREAD).
func discardTyped(f *os.File) {
	const fread = 1
	if c, err := f.SyscallConn(); err == nil {
		_ = c.Control(func(fd uintptr) { _ = unix.IoctlSetPointerInt(int(fd), unix.TIOCFLUSH, fread) })
	}
}
