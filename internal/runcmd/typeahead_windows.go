package runcmd

import (
	"os"

	"golang.org/x/sys/windows"
)

// discardTyped drops what was typed on the console f and not yet read.
func discardTyped(f *os.File) {
	if c, err := f.SyscallConn(); err == nil {
		_ = c.Control(func(fd uintptr) { _ = windows.FlushConsoleInputBuffer(windows.Handle(fd)) })
	}
}
