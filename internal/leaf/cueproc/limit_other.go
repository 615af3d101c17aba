//go:build !unix

package cueproc

// limit does nothing where the system has no resource limits: the parent's
// wall-time bound still kills the child.
func limit() error { return nil }

// memoryBounded says whether a child on this system has a memory limit.
func memoryBounded() bool { return false }
