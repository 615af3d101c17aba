//go:build !unix

package main

import (
	"errors"
	"net"

	"github.com/rogpeppe/go-internal/testscript"
)

// procGone: this system has no signal 0 to ask a process with.
func procGone(ts *testscript.TestScript, _ bool, _ []string) {
	ts.Fatalf("procgone needs a Unix system, which can ask whether a process is gone")
}

// acceptNow: the listener's descriptor is not reached here.
func acceptNow(*net.TCPListener) error { return errors.ErrUnsupported }
