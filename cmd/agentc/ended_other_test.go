//go:build !unix

package main

import "os"

// ended reports whether a process has ended: it can no longer be found.
func ended(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	p.Release()
	return false
}
