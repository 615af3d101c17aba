//go:build unix

package mcp

import (
	"os"
	osexec "os/exec"
	"syscall"
)

// ownGroup makes the server the leader of a new process group, so that
// killGroup reaches everything it starts.
func ownGroup(cmd *osexec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the server's process group. After the server has exited
// this kills only what it left behind.
func killGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}
