//go:build !unix

package devserver

import "os/exec"

// ownGroup does nothing where there are no process groups.
func ownGroup(*exec.Cmd) {}

// killGroup kills the server's process alone.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
