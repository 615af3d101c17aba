//go:build !unix

package userfile

import "testing"

// mkfifo makes no FIFO where the system has none.
func mkfifo(*testing.T, string) bool { return false }
