//go:build !unix

package exec

import (
	"os"
	osexec "os/exec"
)

// ownGroup does nothing where there are no Unix process groups.
func ownGroup(*osexec.Cmd) {}

// killGroup kills the program itself; what it started may outlive it.
func killGroup(p *os.Process) {
	_ = p.Kill()
}
