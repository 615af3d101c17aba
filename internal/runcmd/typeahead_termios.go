//go:build linux || solaris || aix

package runcmd

import (
	"os"

	"golang.org/x/sys/unix"
)

// discardTyped drops what was typed on the terminal f and not yet read
// (tcflush(TCIFLUSH)).
func discardTyped(f *os.File) {
	if c, err := f.SyscallConn(); err == nil {
		_ = c.Control(func(fd uintptr) { _ = unix.IoctlSetInt(int(fd), unix.TCFLSH, unix.TCIFLUSH) })
	}
}
