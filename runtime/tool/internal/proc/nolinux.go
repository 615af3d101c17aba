//go:build !linux

package proc

// Without /proc and subreapers, a Group is its process group alone.

func adopt()           {}
func release()         {}
func sweep(string)     {}
func killAll([]string) {}
