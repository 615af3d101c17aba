//go:build unix && !linux

package proc

import (
	"os/exec"
	"syscall"
)

func setAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
