//go:build unix

// Package proc runs tool programs in process groups of their own, so that
// stopping one stops everything it started.
package proc

import (
	"os"
	"os/exec"
	"syscall"
)

// OwnGroup makes the command's process the leader of a new process group,
// so that KillGroup reaches everything it starts.
func OwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// KillGroup kills the process group the process leads. After the process
// has exited this kills only what it left behind.
func KillGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}
