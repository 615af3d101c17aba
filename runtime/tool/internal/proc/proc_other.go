//go:build !unix

package proc

import (
	"os"
	"os/exec"
)

// setAttr does nothing where there are no Unix process groups.
func setAttr(*exec.Cmd) {}

// killGroup kills the process itself; what it started may outlive it.
func killGroup(p *os.Process, _ int) {
	_ = p.Kill()
}
