//go:build !unix

package mcp

import (
	"os"
	osexec "os/exec"
)

// ownGroup does nothing where there are no Unix process groups.
func ownGroup(*osexec.Cmd) {}

// killGroup kills the server itself; what it started may outlive it.
func killGroup(p *os.Process) {
	_ = p.Kill()
}
