//go:build !(linux || solaris || aix || darwin || dragonfly || freebsd || netbsd || openbsd || windows)

package runcmd

import "os"

// discardTyped does nothing here (plan9, js, wasip1, hurd and the like,
// which have no call to drop a terminal's input): keys typed before a
// call is shown wait in the terminal and answer it. Only where agentc
// itself read them before is that prevented (prompter.ask).
func discardTyped(*os.File) {}
