//go:build !linux

package main

import (
	"fmt"
	"os"
	"runtime"
)

// Elsewhere agentc does not confine, so there is nothing to refuse it.

func nolandlock() { refuseUnsupported() }
func nouserns()   { refuseUnsupported() }
func noseccomp()  { refuseUnsupported() }
func noipcns()    { refuseUnsupported() }

func nomountsetattr() { refuseUnsupported() }

func refuseUnsupported() {
	fmt.Fprintf(os.Stderr, "%s: the kernel's features are refused on Linux only, not %s\n", os.Args[0], runtime.GOOS)
	os.Exit(125)
}

func refuseCondition() bool {
	fmt.Fprintf(os.Stderr, "SKIPPED: scripts that refuse the kernel's features: Linux only, not %s\n", runtime.GOOS)
	return false
}
