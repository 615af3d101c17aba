//go:build unix

package proc

import (
	"os"
	"syscall"
)

// killGroup kills the process group that pid leads. After the process
// has exited this kills only what it left in the group.
func killGroup(_ *os.Process, pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
