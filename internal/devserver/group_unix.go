//go:build unix

package devserver

import (
	"os/exec"
	"syscall"
)

// ownGroup makes the server the leader of a process group of its own, so
// that Stop kills whatever it started too.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the server's process group.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
