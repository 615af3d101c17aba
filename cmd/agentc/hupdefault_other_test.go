//go:build !unix

package main

import (
	"fmt"
	"os"
	"runtime"
)

// hupdefault needs SIGHUP, which only Unix has.
func hupdefault() {
	fmt.Fprintf(os.Stderr, "hupdefault: no SIGHUP on %s\n", runtime.GOOS)
	os.Exit(125)
}
