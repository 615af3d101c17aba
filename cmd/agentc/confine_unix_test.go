//go:build unix

package main

import (
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// procGone is the script command procgone FILE: the process whose pid FILE
// holds has ended (and been reaped).
func procGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: procgone FILE")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
	if err != nil || pid <= 0 {
		ts.Fatalf("%s holds no pid", args[0])
	}
	if err := syscall.Kill(pid, 0); err == nil || err == syscall.EPERM {
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		syscall.Kill(pid, syscall.SIGKILL)
		ts.Fatalf("process %d is still there: %s", pid, stat)
	}
}

// acceptNow accepts a connection the kernel has queued, without waiting
// for one (a deadline in the past would not even look; the
// listener's descriptor does not block): nil if one was.
func acceptNow(l *net.TCPListener) error {
	rc, err := l.SyscallConn()
	if err != nil {
		return err
	}
	var aerr error
	err = rc.Control(func(fd uintptr) {
		var nfd int
		nfd, _, aerr = syscall.Accept(int(fd)) // portable, and closed at once
		if aerr == nil {
			syscall.Close(nfd)
		}
	})
	if err != nil {
		return err
	}
	return aerr
}
