//go:build !unix

// Package proc runs tool programs in process groups of their own, so that
// stopping one stops everything it started.
package proc

import (
	"os"
	"os/exec"
)

// OwnGroup does nothing where there are no Unix process groups.
func OwnGroup(*exec.Cmd) {}

// KillGroup kills the process itself; what it started may outlive it.
func KillGroup(p *os.Process) {
	_ = p.Kill()
}
