//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// hupdefault is the program hupdefault CMD ARGS...: CMD runs with SIGHUP
// at its default disposition, whatever this program started with. A
// signal ignored at start (the tests run under nohup) stays ignored across
// exec, and agentc rightly leaves it so; a signal with a handler is reset
// to its default by exec, and Notify installs one.
func hupdefault() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: hupdefault CMD ARGS...")
		os.Exit(2)
	}
	signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	prog, err := exec.LookPath(os.Args[1])
	if err == nil {
		err = syscall.Exec(prog, os.Args[1:], os.Environ())
	}
	fmt.Fprintf(os.Stderr, "hupdefault: %v\n", err)
	os.Exit(125)
}
