//go:build !unix

package main

import "os/exec"

// ownGroup: no process groups here.
func ownGroup(*exec.Cmd) {}

// killGroup kills cmd's process alone.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
