//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// ended reports whether a process has ended: it no longer exists, or is a
// zombie (where /proc tells).
func ended(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if i := bytes.LastIndexByte(b, ')'); err == nil && i >= 0 && i+2 < len(b) {
		return b[i+2] == 'Z' || b[i+2] == 'X'
	}
	return false
}

func mkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo FILE")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o644))
}
