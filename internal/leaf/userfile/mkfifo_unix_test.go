//go:build unix

package userfile

import (
	"syscall"
	"testing"
)

// mkfifo makes a FIFO at path, and says it could.
func mkfifo(t *testing.T, path string) bool {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	return true
}
