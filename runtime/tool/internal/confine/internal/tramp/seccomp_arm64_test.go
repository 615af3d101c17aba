//go:build linux && arm64

package tramp

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCallNumbers: the filter's numbers for this architecture are its
// system calls'.
func TestCallNumbers(t *testing.T) {
	c := archCalls[unix.AUDIT_ARCH_AARCH64]
	if c.socket != unix.SYS_SOCKET || c.socketpair != unix.SYS_SOCKETPAIR || c.ioUringSetup != unix.SYS_IO_URING_SETUP {
		t.Errorf("socket calls: %+v", c)
	}
	refused := []uint32{unix.SYS_FCHOWN, unix.SYS_FCHOWNAT, unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR,
		unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR, unix.SYS_SETXATTRAT, unix.SYS_REMOVEXATTRAT,
		unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL}
	if !slices.Equal(c.refused, refused) {
		t.Errorf("refused: %v, want %v", c.refused, refused)
	}
	setID := []modeCall{{unix.SYS_FCHMOD, 1}, {unix.SYS_FCHMODAT, 2}, {unix.SYS_FCHMODAT2, 2}}
	if !slices.Equal(c.setID, setID) {
		t.Errorf("setID: %v, want %v", c.setID, setID)
	}
}
