//go:build !unix

package main

import (
	"os"

	"github.com/rogpeppe/go-internal/testscript"
)

// ended reports whether a process has ended: it can no longer be found.
func ended(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	p.Release()
	return false
}

func mkfifo(ts *testscript.TestScript, _ bool, _ []string) {
	ts.Fatalf("mkfifo needs a Unix system: no named pipes here")
}
