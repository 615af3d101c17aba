//go:build !unix

package main

import "github.com/rogpeppe/go-internal/testscript"

// ptyExec needs a pseudo terminal, which only Unix has: a script that
// uses it needs a Unix system, and fails here saying so.
func ptyExec(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("ptyexec: no pseudo terminal on this system")
}
